/* An access to a global array is instrumented (a global is not on the
   stack).  */
/* { dg-do compile } */

int table[64];

__attribute__ ((noipa)) int
bump (int i)
{
  int old = table[i];
  table[i] = old + 1;
  return old;
}

/* { dg-final { scan-tree-dump-times "memprof: instrument load table\\\[i_\[0-9\]+\\(D\\)\\\] " 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: instrument store table\\\[i_\[0-9\]+\\(D\\)\\\] " 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: skip " 0 "memprof" } } */
