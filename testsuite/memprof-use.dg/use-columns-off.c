/* The profile of a build from preprocessed input (-save-temps, gcc -E,
   distcc) puts the malloc call that NEW_BUFFER expands at its column in
   the .i, 20; this build from the source puts it at the macro's name,
   10.  columns=0 matches by lines.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-columns=0 -fplugin-arg-memprof-cold-lifetime=100" } */
#include <stdlib.h>

#define NEW_BUFFER(size) ((char *) malloc ((size) + 1))

char *
make_log (size_t size)
{
  return NEW_BUFFER (size);
}

char *
make_table (size_t size)
{
  return NEW_BUFFER (size + 1);
}

/* { dg-final { scan-tree-dump "memprof-use: malloc call at \[^\n\]*use-columns-off.c:14:10: frames make_log:2:10: 1 context matched \\(1 cold, 0 hot, 0 notcold\\): cold; calls the hinted entry point" "memprof" } } */
/* { dg-final { scan-tree-dump "memprof-use: malloc call at \[^\n\]*use-columns-off.c:20:10: frames make_table:2:10: 1 context matched \\(0 cold, 1 hot, 0 notcold\\): hot; calls the hinted entry point" "memprof" } } */
/* { dg-final { scan-compiler-output "profile \[^\n\]*use-columns-off.(yaml|mprof): 2 contexts; 2 matched here, 0 unmatched \\(stale\\); 2 of 2 allocation calls matched, 0 ambiguous; 0 wrapper clones; rewritten: 1 cold, 1 hot" } } */
