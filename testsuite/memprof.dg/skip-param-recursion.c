/* Recursion: a static recursive-descent function that passes its own
   parameter (and a pointer derived from it) down to itself, first called
   with a caller's local.  The proof is the greatest fixed point, so the
   recursive call sites do not withdraw it.  */
/* { dg-do compile } */

struct state
{
  const char *p;
  int depth;
  int max;
};

__attribute__ ((noinline)) static void
nest (struct state *s)
{
  while (*s->p == '(')
    {
      s->p++;
      if (++s->depth > s->max)
        s->max = s->depth;
      nest (s);
      if (*s->p == ')')
        s->p++;
      s->depth--;
    }
}

int
max_depth (const char *text)
{
  struct state s = { text, 0, 0 };
  nest (&s);
  return s.max;
}

/* { dg-final { scan-tree-dump-times "memprof: instrument \[^\\n\]*s_\[0-9\]+\\(D\\)->" 0 "memprof" { -O2 } } } */
/* { dg-final { scan-tree-dump "totals for nest: \[0-9\]+ instrumented \[^\\n\]* \[1-9\]\[0-9\]* pointer parameter: callers' frames" "memprof" { -O2 } } } */
/* { dg-final { scan-tree-dump "memprof: instrument store s_\[0-9\]+\\(D\\)->depth" "memprof" { -O0 } } } */
/* { dg-final { scan-ipa-dump "parameter s of nest/\[0-9\]+: callers' frames" "memprof-stack-params" { -O2 } } } */
