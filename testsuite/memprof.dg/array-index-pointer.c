/* Indexing through a pointer, p[i], is instrumented: one store and one
   load.  */
/* { dg-do compile } */

__attribute__ ((noipa)) int
swap_in (int *p, int i, int j, int v)
{
  int old = p[j];
  p[i] = v;
  return old;
}

/* { dg-final { scan-tree-dump-times "memprof: instrument store " 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: instrument load " 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: skip " 0 "memprof" } } */
