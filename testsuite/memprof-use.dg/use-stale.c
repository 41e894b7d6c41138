/* A profile of an older version of the code: the context's call is now a
   line lower, so it matches nothing and is counted stale; the call is
   left alone.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-cold-lifetime=1" } */
#include <stdlib.h>

void *
make_log (size_t size)
{
  size += 16;
  return malloc (size);
}

/* { dg-final { scan-tree-dump "frames make_log:3:10: 0 contexts matched \\(0 cold, 0 hot, 0 notcold\\): no context matched; left alone" "memprof" } } */
/* { dg-final { scan-compiler-output "1 contexts; 0 matched here, 1 unmatched \\(stale\\); 0 of 1 allocation calls matched" } } */
