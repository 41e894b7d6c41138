/* A pointer chosen by a condition between two local arrays (a PHI at -O0,
   a PHI or COND_EXPR at -O2) points to the stack either way: both of
   its origins are frame storage, so the accesses are skipped.  */
/* { dg-do compile } */

void consume (int *);

__attribute__ ((noipa)) int
choose (int c, int i)
{
  int a[8], b[8];
  int *p = c ? a : b;
  p[i] = 1;
  consume (a);
  consume (b);
  return p[i];
}

/* { dg-final { scan-tree-dump-times "memprof: instrument " 0 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: skip store \[^\\n\]*\\(stack: pointer to stack\\)" 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: skip load \[^\\n\]*\\(stack: pointer to stack\\)" 1 "memprof" } } */
