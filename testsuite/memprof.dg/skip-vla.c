/* Elements of a variable-length array (storage from __builtin_alloca
   _with_align) are skipped as "stack: alloca" at every level.  */
/* { dg-do compile } */

void consume (int *);

__attribute__ ((noipa)) int
vla (int n, int i)
{
  int b[n];
  b[i] = 3;
  consume (b);
  return b[i];
}

/* { dg-final { scan-tree-dump-times "memprof: instrument " 0 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: skip store \[^\\n\]*\\(stack: alloca\\)" 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: skip load \[^\\n\]*\\(stack: alloca\\)" 1 "memprof" } } */
