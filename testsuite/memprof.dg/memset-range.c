/* memset is one range store and no load.  */
/* { dg-do compile } */

#include <string.h>

__attribute__ ((noipa)) void
clear_bytes (char *dst, size_t n)
{
  memset (dst, 0, n);
}

/* { dg-final { scan-tree-dump-times "memprof: instrument range store dst_\[0-9\]+\\(D\\) " 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: instrument (range )?load " 0 "memprof" } } */
/* { dg-final { scan-tree-dump "totals for clear_bytes: 1 instrumented \\(0 loads, 0 stores, 1 ranges\\)" "memprof" } } */
