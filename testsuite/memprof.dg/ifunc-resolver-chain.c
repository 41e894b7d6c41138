/* A chain of calls from an IFUNC resolver longer than the plugin follows
   (RESOLVER_CALL_DEPTH, 4): the functions of the chain are left
   uninstrumented, and the first one that counts accesses, five calls
   down, gets the note where the last uninstrumented one calls it, in a
   -fPIC unit (docs/plugin.md, "Code that runs before start-up").  */
/* { dg-do compile } */
/* { dg-options "-O2 -fPIC -fplugin-arg-memprof-dump" } */

int *volatile table_pointer;

__attribute__ ((noinline)) static int
h5 (int *p)
{
  return p[5];
}

__attribute__ ((noinline)) static int
h4 (int *p)
{
  return h5 (p) + 4;
  /* { dg-message "memprof: .h4., run by IFUNC resolvers, calls .h5., which counts accesses" "" { target *-*-* } 20 } */
}

__attribute__ ((noinline)) static int
h3 (int *p)
{
  return h4 (p) + 3;
}

__attribute__ ((noinline)) static int
h2 (int *p)
{
  return h3 (p) + 2;
}

__attribute__ ((noinline)) static int
h1 (int *p)
{
  return h2 (p) + 1;
}

static int
add_one (int *p)
{
  return p != 0;
}

static void *
resolve_pick (void)
{
  return h1 (table_pointer) ? (void *) add_one : (void *) 0;
}

int pick (int *) __attribute__ ((ifunc ("resolve_pick")));

/* { dg-final { scan-tree-dump-times "memprof: instrument load" 1 "memprof" } } */
