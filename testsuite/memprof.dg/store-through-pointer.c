/* A scalar store through a pointer parameter is instrumented as exactly
   one store (and nothing else is read or written).  */
/* { dg-do compile } */

__attribute__ ((noipa)) void
write_one (int *p, int v)
{
  *p = v;
}

/* { dg-final { scan-tree-dump-times "memprof: instrument store \\*p_\[0-9\]+\\(D\\) " 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: instrument load " 0 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: skip " 0 "memprof" } } */
