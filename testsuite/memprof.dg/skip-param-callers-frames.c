/* A static helper whose only caller passes the address of its own local
   struct: at -O2 the late IPA step (stack_params.cc) proves the
   parameter points into the callers' frames, and the accesses through it
   are skipped as "pointer parameter: callers' frames".  At -O0 the step
   does not run (parameters live in memory): they are instrumented.  */
/* { dg-do compile } */

struct cursor
{
  const char *p;
  int depth;
};

__attribute__ ((noinline)) static void
advance (struct cursor *c)
{
  c->p++;
  c->depth += 2;
}

int
count (const char *text)
{
  struct cursor c = { text, 0 };
  while (*c.p)
    advance (&c);
  return c.depth;
}

/* { dg-final { scan-tree-dump-times "memprof: skip (load|store) c_\[0-9\]+\\(D\\)->(p|depth) \\(stack: pointer parameter: callers' frames\\)" 4 "memprof" { -O2 } } } */
/* { dg-final { scan-tree-dump "totals for advance: 0 instrumented" "memprof" { -O2 } } } */
/* { dg-final { scan-ipa-dump "parameter c of advance/\[0-9\]+: callers' frames" "memprof-stack-params" { -O2 } } } */
/* { dg-final { scan-tree-dump-times "\\(stack: pointer parameter: callers' frames\\)" 0 "memprof" { -O0 } } } */
/* { dg-final { scan-tree-dump "totals for advance: 4 instrumented" "memprof" { -O0 } } } */
