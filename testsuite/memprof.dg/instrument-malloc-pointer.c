/* A store through a pointer returned by malloc is instrumented: a call's
   result is not a stack origin.  */
/* { dg-do compile } */

#include <stdlib.h>

__attribute__ ((noipa)) int *
make_block (int v)
{
  int *p = malloc (4 * sizeof (int));
  p[2] = v;
  return p;
}

/* { dg-final { scan-tree-dump-times "memprof: instrument store " 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: skip " 0 "memprof" } } */
