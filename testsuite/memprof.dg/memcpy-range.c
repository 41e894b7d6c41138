/* memcpy with a variable length is a range store at the destination and
   a range load at the source.  */
/* { dg-do compile } */

#include <string.h>

__attribute__ ((noipa)) void
copy_bytes (char *dst, const char *src, size_t n)
{
  memcpy (dst, src, n);
}

/* { dg-final { scan-tree-dump-times "memprof: instrument range store dst_\[0-9\]+\\(D\\) " 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: instrument range load src_\[0-9\]+\\(D\\) " 1 "memprof" } } */
/* { dg-final { scan-tree-dump "totals for copy_bytes: 2 instrumented \\(0 loads, 0 stores, 2 ranges\\)" "memprof" } } */
