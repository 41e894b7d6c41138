/* A site whose contexts disagree (one caller's cold, the other's hot) is
   ambiguous and left alone without cloning (use-clone.c clones) and without
   context hints (use-ambiguous-depth.c): one call cannot serve both.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-cold-lifetime=1 -fplugin-arg-memprof-clone-wrappers=0 -fplugin-arg-memprof-context-hints=0" } */
#include <stdlib.h>

__attribute__ ((noinline, noipa)) static void *
wrapper (size_t size)
{
  return malloc (size);
}

void *
for_log (void)
{
  return wrapper (100);
}

void *
for_table (void)
{
  return wrapper (200);
}

/* { dg-final { scan-tree-dump "malloc call at \[^\n\]*:11:10: frames wrapper:2:10: 2 contexts matched \\(1 cold, 1 hot, 0 notcold\\): ambiguous: its contexts disagree \\(no byte counts; the first caller tells the classes apart\\); left alone" "memprof" } } */
/* { dg-final { scan-tree-dump-times "rewritten:" 0 "memprof" } } */
/* { dg-final { scan-compiler-output "2 matched here, 0 unmatched \\(stale\\); 1 of 1 allocation calls matched, 1 ambiguous; 0 wrapper clones; rewritten: 0 cold, 0 hot" } } */
