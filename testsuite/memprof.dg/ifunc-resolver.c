/* An IFUNC resolver, and the functions of its unit only resolvers call,
   are left uninstrumented: they may run before the runtime has reserved
   the shadow (docs/plugin.md, "Code that runs before start-up").  In a
   -fPIC unit, a resolver calling a function that counts gets a note.  The
   one instrumented load is counted's.  */
/* { dg-do compile } */
/* { dg-options "-fPIC -fplugin-arg-memprof-dump" } */

int *volatile table_pointer;
/* Defined after the resolver, compiled after it at -O0.  */
static int defined_after (int *p);

__attribute__ ((noinline)) static int
resolver_only (int *p)
{
  return p[1];
}

__attribute__ ((noinline)) int
counted (int *p)
{
  return p[0];
}

static void *
resolve_pick (void)
{
  int *p = table_pointer;
  int counts = counted (p);
  /* { dg-message "IFUNC resolver .resolve_pick. calls .counted., which counts accesses" "" { target *-*-* } 29 } */
  return p[2] && resolver_only (p) && defined_after (p) && counts
             ? (void *) counted
             : (void *) 0;
}

int pick (int *) __attribute__ ((ifunc ("resolve_pick")));

__attribute__ ((noinline)) static int
defined_after (int *p)
{
  return p[3];
}

/* { dg-final { scan-tree-dump-times "memprof: instrument load" 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: instrument load \\*p_\[0-9\]+\\(D\\) " 1 "memprof" } } */
