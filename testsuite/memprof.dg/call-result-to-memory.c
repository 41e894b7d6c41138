/* A call whose aggregate result is stored straight to memory,
   *p = make (), is a store: collect_call records the call's lhs.  */
/* { dg-do compile } */

struct record
{
  long field[8];
};

struct record make (void);

__attribute__ ((noipa)) void
fill (struct record *p)
{
  *p = make ();
}

/* { dg-final { scan-tree-dump-times "memprof: instrument store \\*p_\[0-9\]+\\(D\\) " 1 "memprof" } } */
/* { dg-final { scan-tree-dump "totals for fill: 1 instrumented \\(0 loads, 1 stores, 0 ranges\\)" "memprof" } } */
