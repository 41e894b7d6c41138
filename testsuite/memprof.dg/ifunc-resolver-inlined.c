/* A function of the unit that an IFUNC resolver calls is left
   uninstrumented only if every call to it runs in a resolver.  Here the
   IPA inliner inlines helper into the resolver (an inline clone sharing
   helper's declaration) but not into work, whose cold calls keep the
   offline helper: that copy runs after start-up and must count its
   loads (3 loops of loads through P).  */
/* { dg-do compile } */
/* { dg-options "-O2 -fplugin-arg-memprof-dump" } */

int *volatile table_pointer;

static inline int
helper (int *p, int n)
{
  int s = 0;
  for (int i = 0; i < n; i++)
    s += p[i] * (i + 1) ^ (s >> 3);
  for (int i = 0; i < n; i += 2)
    s ^= p[i] << (i & 7);
  for (int i = 1; i < n; i += 3)
    s += p[i] / (i + 3);
  return s;
}

static int
add_one (int x)
{
  return x + 1;
}

static int
add_two (int x)
{
  return x + 2;
}

static void *
resolve_add (void)
{
  return helper (table_pointer, 4) & 1 ? (void *) add_one : (void *) add_two;
}

int add (int) __attribute__ ((ifunc ("resolve_add")));

__attribute__ ((cold, noinline)) int
work (int *b)
{
  return helper (b, 16) + helper (b + 8, 8);
}

/* { dg-final { scan-tree-dump-times "memprof: instrument load" 3 "memprof" } } */
