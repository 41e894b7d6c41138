/* -fplugin-arg-memprof-writes=0: stores (and range stores) are skipped as
   "writes disabled", loads are still instrumented.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-dump -fplugin-arg-memprof-writes=0" } */

#include <string.h>

__attribute__ ((noipa)) int
move (int *dst, const int *src, size_t n)
{
  memcpy (dst, src, n);
  dst[1] = src[2];
  return dst[0];
}

/* { dg-final { scan-tree-dump-times "memprof: skip (range )?store \[^\\n\]*\\(writes disabled\\)" 2 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: instrument range load src_" 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: instrument load " 2 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: instrument (range )?store " 0 "memprof" } } */
