/* Volatile loads and stores are instrumented like any other: one store
   and two loads here (volatile accesses are never merged or removed, so
   the counts are the same at every level).  */
/* { dg-do compile } */

__attribute__ ((noipa)) int
poke_and_peek (volatile int *p)
{
  *p = 1;
  return *p + *p;
}

/* { dg-final { scan-tree-dump-times "memprof: instrument store \\*p_\[0-9\]+\\(D\\) " 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: instrument load \\*p_\[0-9\]+\\(D\\) " 2 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: skip " 0 "memprof" } } */
