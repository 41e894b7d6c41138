/* An aggregate passed by value straight from memory, take (*p), is a
   load of *p (collect_call: a memory argument of a call).  */
/* { dg-do compile } */

struct block
{
  long word[6];
};

void take (struct block);

__attribute__ ((noipa)) void
pass_on (struct block *p)
{
  take (*p);
}

/* { dg-final { scan-tree-dump-times "memprof: instrument load \\*p_\[0-9\]+\\(D\\) " 1 "memprof" } } */
/* { dg-final { scan-tree-dump "totals for pass_on: 1 instrumented \\(1 loads, 0 stores, 0 ranges\\)" "memprof" } } */
