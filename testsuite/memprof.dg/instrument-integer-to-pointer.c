/* An integer parameter turned into a pointer, (int *) (uintptr_t) x, may
   be any address: integer_proof gives up on a default definition, so the
   accesses are instrumented.  */
/* { dg-do compile } */

#include <stdint.h>

__attribute__ ((noipa)) int
poke (uintptr_t x)
{
  int *p = (int *) x;
  *p = 1;
  return p[1];
}

/* { dg-final { scan-tree-dump-times "memprof: instrument store " 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: instrument load " 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: skip " 0 "memprof" } } */
