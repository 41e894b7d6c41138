/* Combined counter updates keep counts exact (combine.cc): accesses of
   a block that hit one counter share one update adding their number;
   accesses through another pointer at the same offsets count on their
   own block.  Counted by hand (volatile keeps every access at every -O
   level): per call of touch, 5 accesses to P's block and 3 to Q's, so
   50 and 30; then 3 stores to a fresh block of P's size, two of them in
   one 16-byte chunk of a pointer declared 16-byte aligned.  A combined
   update that adds too much or too little changes a total.  */
/* { dg-do run } */
/* { dg-memprof-options "print_text=1:write_profile=0" } */

#include <stdlib.h>

struct node
{
  volatile long v[8];
};

struct other
{
  volatile long v[6];
};

__attribute__ ((noipa)) void
touch (struct node *p, struct other *q)
{
  p->v[0]++;         /* a load and a store of one address: 2 */
  p->v[1] = p->v[0]; /* 2 */
  q->v[0]++;         /* 2 on Q's block: same offsets, another pointer */
  p->v[7] = q->v[5]; /* 1 and 1 */
}

int
main (void)
{
  struct node *p = malloc (sizeof *p);
  struct other *q = malloc (sizeof *q);
  for (int i = 0; i < 10; i++)
    touch (p, q);
  free (q);
  free (p);
  p = __builtin_assume_aligned (malloc (sizeof *p), 16);
  p->v[0] = 1;
  p->v[1] = 2;
  p->v[2] = 3;
  free (p);
  return 0;
}

/* The totals, in whatever order the contexts are printed.  */
/* { dg-output "(?=.*size \\(ave/min/max\\) 64.00 / 64 / 64\[^\n\]*\n\[^\n\]*access_count \\(ave/min/max\\): 50.00 / 50 / 50\n)(?=.*size \\(ave/min/max\\) 48.00 / 48 / 48\[^\n\]*\n\[^\n\]*access_count \\(ave/min/max\\): 30.00 / 30 / 30\n)(?=.*size \\(ave/min/max\\) 64.00 / 64 / 64\[^\n\]*\n\[^\n\]*access_count \\(ave/min/max\\): 3.00 / 3 / 3\n)" } */
/* The updates that were combined.  */
/* { dg-final { scan-tree-dump "one update adds 3 at p_\[0-9\]+\\(D\\)->v\\\[0\\\]" "memprof" } } */
/* { dg-final { scan-tree-dump "one update adds 2 at q_\[0-9\]+\\(D\\)->v\\\[0\\\]" "memprof" } } */
/* { dg-final { scan-tree-dump "one update adds 2 at p_\[0-9\]+->v\\\[0\\\]" "memprof" { -O2 } } } */
