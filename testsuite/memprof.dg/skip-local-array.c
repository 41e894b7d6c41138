/* Accesses to a local array are provably on the stack: skipped.  */
/* { dg-do compile } */

int consume (int *);

int
sum_local (int n)
{
  int buffer[32];
  int total = 0;
  for (int i = 0; i < 32; i++)
    buffer[i] = i * n;
  consume (buffer);
  for (int i = 0; i < 32; i++)
    total += buffer[i];
  return total;
}

/* { dg-final { scan-tree-dump-times "memprof: instrument " 0 "memprof" } } */
/* { dg-final { scan-tree-dump "skip store .*\\(stack: " "memprof" } } */
/* { dg-final { scan-tree-dump "skip load .*\\(stack: " "memprof" } } */
