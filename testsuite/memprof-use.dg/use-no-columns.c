/* A profile without columns (a binary built with -gno-column-info, or a
   clang profile to be matched by line only) matches on lines alone, as
   LLVM's use pass does.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-cold-lifetime=1" } */
#include <stdlib.h>

void *
make_log (void)
{
  return malloc (64);
}

/* { dg-final { scan-tree-dump "frames make_log:2:10: 1 context matched \\(1 cold, 0 hot, 0 notcold\\): cold; calls the hinted entry point" "memprof" } } */
