/* Each malloc call is matched to its context by its function and its
   line and column in it: the one the profile calls cold calls
   __memprof_hint_malloc with the cold hint (1), the hot one with the hot
   hint (254), the notcold one is left alone, and one the profile does
   not hold is left alone.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-cold-lifetime=100" } */
#include <stdlib.h>

/* The sizes differ so that -O2 does not fold the four functions into one
   (identical code folding).  */
void *
make_log (size_t size)
{
  return malloc (size + 1);
}

void *
make_table (size_t size)
{
  return malloc (size + 2);
}

void *
make_buffer (size_t size)
{
  return malloc (size + 3);
}

void *
make_other (size_t size)
{
  return malloc (size + 4);
}

/* { dg-final { scan-tree-dump "memprof-use: malloc call at \[^\n\]*use-malloc.c:15:10: frames make_log:2:10: 1 context matched \\(1 cold, 0 hot, 0 notcold\\): cold; calls the hinted entry point" "memprof" } } */
/* { dg-final { scan-tree-dump "rewritten: _\[0-9\]+ = __memprof_hint_malloc \\(_\[0-9\]+, 1\\);" "memprof" } } */
/* { dg-final { scan-tree-dump "memprof-use: malloc call at \[^\n\]*use-malloc.c:21:10: frames make_table:2:10: 1 context matched \\(0 cold, 1 hot, 0 notcold\\): hot; calls the hinted entry point" "memprof" } } */
/* { dg-final { scan-tree-dump "rewritten: _\[0-9\]+ = __memprof_hint_malloc \\(_\[0-9\]+, 254\\);" "memprof" } } */
/* { dg-final { scan-tree-dump "memprof-use: malloc call at \[^\n\]*use-malloc.c:27:10: frames make_buffer:2:10: 1 context matched \\(0 cold, 0 hot, 1 notcold\\): notcold; left alone" "memprof" } } */
/* { dg-final { scan-tree-dump "memprof-use: malloc call at \[^\n\]*use-malloc.c:33:10: frames make_other:2:10: 0 contexts matched \\(0 cold, 0 hot, 0 notcold\\): no context matched; left alone" "memprof" } } */
/* { dg-final { scan-tree-dump-times "rewritten:" 2 "memprof" } } */
/* { dg-final { scan-compiler-output "profile \[^\n\]*use-malloc.(yaml|mprof): 3 contexts; 3 matched here, 0 unmatched \\(stale\\); 3 of 4 allocation calls matched, 0 ambiguous; 0 wrapper clones; rewritten: 1 cold, 1 hot" } } */
