/* A pointer that is either a local array or a malloc result
   (p = c ? buf : malloc (...)) may point to the heap: one origin is not
   stack, so both accesses through it are instrumented (at -O2 too, where
   the PHI merges &buf and the call's result).  */
/* { dg-do compile } */

#include <stdlib.h>

void consume (int *);

__attribute__ ((noipa)) int
either (int c, int v)
{
  int buf[4];
  int *p = c ? buf : malloc (4 * sizeof (int));
  p[1] = v;
  consume (p);
  return p[1];
}

/* { dg-final { scan-tree-dump-times "memprof: instrument store " 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: instrument load " 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: skip " 0 "memprof" } } */
