/* A pointer incremented in a loop over a local array is skipped: at -O0
   through the loop PHI, at -O2 where ivopts and the vectoriser have
   rewritten the loops with integer induction variables turned back into
   pointers (integer_proof), still "pointer to stack".  */
/* { dg-do compile } */

void consume (int *);

__attribute__ ((noipa)) int
walk (int n)
{
  int buf[32];
  int s = 0;
  for (int *p = buf; p < buf + 32; p++)
    *p = n;
  consume (buf);
  for (int *p = buf; p < buf + 32; p++)
    s += *p;
  return s;
}

/* { dg-final { scan-tree-dump-times "memprof: instrument " 0 "memprof" } } */
/* { dg-final { scan-tree-dump "memprof: skip store \[^\\n\]*\\(stack: pointer to stack\\)" "memprof" } } */
/* { dg-final { scan-tree-dump "memprof: skip load \[^\\n\]*\\(stack: pointer to stack\\)" "memprof" } } */
