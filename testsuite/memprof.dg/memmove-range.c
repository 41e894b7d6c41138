/* memmove with a variable length is a range store at the destination and
   a range load at the source, as memcpy.  */
/* { dg-do compile } */

#include <string.h>

__attribute__ ((noipa)) void
move_bytes (char *dst, const char *src, size_t n)
{
  memmove (dst, src, n);
}

/* { dg-final { scan-tree-dump-times "memprof: instrument range store dst_\[0-9\]+\\(D\\) " 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: instrument range load src_\[0-9\]+\\(D\\) " 1 "memprof" } } */
/* { dg-final { scan-tree-dump "totals for move_bytes: 2 instrumented \\(0 loads, 0 stores, 2 ranges\\)" "memprof" } } */
