/* A store to and a load from a global scalar are instrumented.  */
/* { dg-do compile } */

int total;

__attribute__ ((noipa)) void
set (int v)
{
  total = v;
}

__attribute__ ((noipa)) int
get (void)
{
  return total;
}

/* { dg-final { scan-tree-dump-times "memprof: instrument store total " 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: instrument load total " 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: skip " 0 "memprof" } } */
