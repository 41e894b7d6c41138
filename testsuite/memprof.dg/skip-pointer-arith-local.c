/* Pointer arithmetic on a local array, int *q = buf + i, still points to
   the stack: pointer_proof follows the POINTER_PLUS_EXPR to &buf.  */
/* { dg-do compile } */

void consume (int *);

__attribute__ ((noipa)) int
offset_into_local (int i)
{
  int buf[16];
  int *q = buf + i;
  *q = 5;
  consume (buf);
  return *q;
}

/* { dg-final { scan-tree-dump-times "memprof: instrument " 0 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: skip (load|store) \\*q_\[0-9\]+ \\(stack: pointer to stack\\)" 2 "memprof" } } */
