/* With -fplugin-arg-memprof-clone-depth=1, one level of cloning: the
   program and profile of use-clone-chain.c, whose wrapper's contexts
   part only at its caller's callers, get no clone.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-cold-lifetime=1 -fplugin-arg-memprof-clone-depth=1" } */
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

/* { dg-final { scan-compiler-output "1 of 1 allocation calls matched, 1 ambiguous; 0 wrapper clones; rewritten: 0 cold, 0 hot" } } */
