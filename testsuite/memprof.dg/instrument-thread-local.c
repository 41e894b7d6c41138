/* A __thread variable is not on the stack: its accesses are
   instrumented (tv += v is a load and a store).  */
/* { dg-do compile } */

__thread int tv;

__attribute__ ((noipa)) void
accumulate (int v)
{
  tv += v;
}

/* { dg-final { scan-tree-dump-times "memprof: instrument load tv " 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: instrument store tv " 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: skip " 0 "memprof" } } */
