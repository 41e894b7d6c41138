/* A parameter that receives a stack address from one caller and a heap
   address from another stays instrumented: one call site is enough to
   withdraw the proof.  Its twin, called with stack addresses only, is
   skipped (the control that the step ran).  */
/* { dg-do compile } */

#include <stdlib.h>

__attribute__ ((noinline)) static void
bump_mixed (int *q, int v)
{
  q[1] += v;
}

__attribute__ ((noinline)) static void
bump_stack (int *q, int v)
{
  q[2] -= v;
}

int
run (int n)
{
  int local[4] = { 0 };
  int *heap = calloc (4, sizeof (int));
  for (int i = 0; i < n; i++)
    {
      bump_mixed (local, i);
      bump_mixed (heap, i);
      bump_stack (local, i);
    }
  int result = heap[1] + local[1] + local[2];
  free (heap);
  return result;
}

/* { dg-final { scan-tree-dump "totals for bump_mixed: 2 instrumented" "memprof" } } */
/* { dg-final { scan-tree-dump "totals for bump_stack: 0 instrumented \[^\\n\]*2 pointer parameter: callers' frames" "memprof" { -O2 } } } */
/* { dg-final { scan-tree-dump "totals for bump_stack: 2 instrumented" "memprof" { -O0 } } } */
