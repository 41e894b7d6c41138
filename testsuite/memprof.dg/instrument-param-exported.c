/* Without -flto a function GCC cannot see every caller of stays
   instrumented even when every call in this unit passes a stack address:
   an exported function (callers in other units), and a static function
   whose address is taken (indirect calls).  The static helper with the
   same calls and no other use is the control.  */
/* { dg-do compile } */

void (*hook) (int *);

__attribute__ ((noinline)) void
exported (int *q)
{
  q[1] += 3;
}

__attribute__ ((noinline)) static void
address_taken (int *q)
{
  q[1] += 5;
}

__attribute__ ((noinline)) static void
only_direct (int *q)
{
  q[1] += 7;
}

int
run (void)
{
  int local[4] = { 0 };
  hook = address_taken;
  exported (local);
  address_taken (local);
  only_direct (local);
  return local[1];
}

/* { dg-final { scan-tree-dump "totals for exported: 2 instrumented" "memprof" } } */
/* { dg-final { scan-tree-dump "totals for address_taken: 2 instrumented" "memprof" } } */
/* { dg-final { scan-tree-dump "totals for only_direct: 0 instrumented" "memprof" { -O2 } } } */
