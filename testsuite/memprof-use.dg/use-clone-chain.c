/* A clone chain: xmalloc's only caller is xstrdup, whose contexts are
   mixed; they part one level up, at xstrdup's callers.  Both wrappers
   are cloned per class: the cold callers call xstrdup's cold clone,
   which calls xmalloc's cold clone (its malloc call hinted cold), and
   the same for hot.  The direct caller of xmalloc (notcold) keeps the
   original.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-cold-lifetime=1 -fplugin-arg-memprof-remarks" } */
#include <stdlib.h>
#include <string.h>

__attribute__ ((noinline)) void *
xmalloc (size_t size)
{
  return malloc (size);
}

__attribute__ ((noinline)) char *
xstrdup (const char *text)
{
  return strcpy (xmalloc (strlen (text) + 1), text);
}

char *
for_log (const char *text)
{
  return xstrdup (text);
}

char *
for_table (const char *text)
{
  return xstrdup (text);
}

void *
for_buffer (void)
{
  return xmalloc (64);
}

/* { dg-message ".xstrdup. cloned as .xstrdup.memprof_cold.\[0-9\]+. for its 1 cold caller, to call .xmalloc.memprof_cold.\[0-9\]+.: a clone chain \\(level 2 of at most 3\\)" "" { target *-*-* } 19 } */
/* { dg-message ".xstrdup. cloned as .xstrdup.memprof_hot.\[0-9\]+. for its 1 hot caller, to call .xmalloc.memprof_hot.\[0-9\]+.: a clone chain \\(level 2 of at most 3\\)" "" { target *-*-* } 19 } */
/* { dg-message "in the clone .xmalloc.memprof_cold.\[0-9\]+. of its wrapper, called by its 1 cold caller" "" { target *-*-* } 15 } */
/* { dg-message "in the clone .xmalloc.memprof_hot.\[0-9\]+. of its wrapper, called by its 1 hot caller" "" { target *-*-* } 15 } */
/* { dg-message "memprof: .malloc. call: ambiguous: its contexts disagree" "" { target *-*-* } 15 } */
/* { dg-prune-output "At top level" } */
/* { dg-final { scan-compiler-output "1 of 1 allocation calls matched, 1 ambiguous; 4 wrapper clones; rewritten: 1 cold, 1 hot" } } */
/* { dg-final { scan-ipa-dump "xstrdup/\[0-9\]+ cloned as xstrdup.memprof_cold.\[0-9\]+/\[0-9\]+ for 1 cold caller, calling xmalloc.memprof_cold.\[0-9\]+/\[0-9\]+ \\(clone chain, level 2\\)" "memprof-clone" } } */
/* { dg-final { scan-ipa-dump "xstrdup/\[0-9\]+ cloned as xstrdup.memprof_hot.\[0-9\]+/\[0-9\]+ for 1 hot caller, calling xmalloc.memprof_hot.\[0-9\]+/\[0-9\]+ \\(clone chain, level 2\\)" "memprof-clone" } } */
