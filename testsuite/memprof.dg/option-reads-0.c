/* -fplugin-arg-memprof-reads=0: loads (and range loads) are skipped as
   "reads disabled", stores are still instrumented.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-dump -fplugin-arg-memprof-reads=0" } */

#include <string.h>

__attribute__ ((noipa)) int
move (int *dst, const int *src, size_t n)
{
  memcpy (dst, src, n);
  dst[1] = src[2];
  return dst[0];
}

/* { dg-final { scan-tree-dump-times "memprof: skip (range )?load \[^\\n\]*\\(reads disabled\\)" 3 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: instrument range store dst_" 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: instrument store " 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: instrument (range )?load " 0 "memprof" } } */
