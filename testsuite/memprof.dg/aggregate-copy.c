/* An aggregate copy *p = *q is one GIMPLE statement that is both a store
   (to *p) and a load (from *q): collect_accesses records both.  */
/* { dg-do compile } */

struct pair
{
  long first[4];
  long second[4];
};

__attribute__ ((noipa)) void
copy_pair (struct pair *p, const struct pair *q)
{
  *p = *q;
}

/* { dg-final { scan-tree-dump-times "memprof: instrument store \\*p_\[0-9\]+\\(D\\) " 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: instrument load \\*q_\[0-9\]+\\(D\\) " 1 "memprof" } } */
/* { dg-final { scan-tree-dump "totals for copy_pair: 2 instrumented \\(1 loads, 1 stores, 0 ranges\\)" "memprof" } } */
