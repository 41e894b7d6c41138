/* A local whose address escapes to an external function is still this
   frame's storage: its accesses are skipped (escape does not move it off
   the stack).  */
/* { dg-do compile } */

void consume (int *);

__attribute__ ((noipa)) int
escaping (int v)
{
  int x;
  consume (&x);
  x = v;
  consume (&x);
  return x;
}

/* { dg-final { scan-tree-dump-times "memprof: instrument " 0 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: skip store x \\(stack: local variable\\)" 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: skip load x \\(stack: local variable\\)" 1 "memprof" } } */
