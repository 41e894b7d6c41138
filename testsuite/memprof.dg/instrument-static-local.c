/* A static local variable is static storage, not the frame's: its
   accesses are instrumented.  ++n is a load and a store; at -O0 the
   returned value is loaded again, at -O2 it is reused.  */
/* { dg-do compile } */

__attribute__ ((noipa)) int
next_id (void)
{
  static int n;
  return ++n;
}

/* { dg-final { scan-tree-dump-times "memprof: instrument store n " 1 "memprof" } } */
/* { dg-final { scan-tree-dump "memprof: instrument load n " "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: skip " 0 "memprof" } } */
