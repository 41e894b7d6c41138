/* With -fipa-pta GCC's points-to set of a pointer loaded from memory can
   name a caller's local: the store through it is skipped as "points-to
   set: other frames" (rule 6).  Without -fipa-pta
   (skip-param-callers-frames.c and the others) the loaded pointer is
   unknown; at -O0 there are no points-to sets.  */
/* { dg-do compile } */
/* { dg-options "-fipa-pta -fplugin-arg-memprof-dump" } */

struct holder
{
  int *where;
};

__attribute__ ((noinline, noclone)) static void
through_memory (struct holder *h, int v)
{
  h->where[1] = v;
}

int
run (int v)
{
  int local[4] = { 0 };
  struct holder h = { local };
  through_memory (&h, v);
  return local[1];
}

/* { dg-final { scan-tree-dump "memprof: skip store MEM\\\[\\(int \\*\\)_\[0-9\]+ \\+ 4B\\\] \\(stack: points-to set: other frames\\)" "memprof" { -O2 } } } */
/* { dg-final { scan-tree-dump "memprof: instrument store " "memprof" { -O0 } } } */
