/* A clone chain is at most three functions long: xmalloc's contexts
   part only at the callers of level4, the fourth function up, so no
   wrapper is cloned (the call is left to context hints).  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-cold-lifetime=1" } */
#include <stdlib.h>

__attribute__ ((noinline)) void *
xmalloc (size_t size)
{
  return malloc (size);
}

__attribute__ ((noinline)) void *
level2 (size_t size)
{
  return xmalloc (size);
}

__attribute__ ((noinline)) void *
level3 (size_t size)
{
  return level2 (size);
}

__attribute__ ((noinline)) void *
level4 (size_t size)
{
  return level3 (size);
}

void *
for_log (void)
{
  return level4 (100);
}

void *
for_table (void)
{
  return level4 (200);
}

/* { dg-final { scan-compiler-output "1 of 1 allocation calls matched, 1 ambiguous; 0 wrapper clones; rewritten: 0 cold, 0 hot" } } */
