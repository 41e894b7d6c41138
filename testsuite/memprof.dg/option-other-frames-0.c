/* -fplugin-arg-memprof-other-frames=0 turns the rules across frames off
   (for programs that run code on stacks they allocated): the parameter
   that every caller passes a local's address is instrumented again.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-dump -fplugin-arg-memprof-other-frames=0" } */

__attribute__ ((noinline)) static void
set (int *q, int v)
{
  q[1] = v;
}

int
run (int v)
{
  int local[2];
  set (local, v);
  return local[1];
}

/* { dg-final { scan-tree-dump "totals for set: 1 instrumented" "memprof" } } */
/* { dg-final { scan-tree-dump-times "callers' frames\\)" 0 "memprof" } } */
