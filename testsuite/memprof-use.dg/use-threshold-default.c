/* LLVM's thresholds, by name (thresholds=llvm): a context with a
   lifetime access density of 0.5 accesses per byte per second and a mean
   lifetime of 300 s is not cold (0.5 is over 0.05).  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-thresholds=llvm" } */

#include <stdlib.h>

void *
make_record (void)
{
  return malloc (64);
}

void *
make_index (void)
{
  return malloc (128);
}

/* { dg-final { scan-tree-dump ":12:10: frames make_record:2:10: 1 context matched \\(0 cold, 0 hot, 1 notcold\\): notcold; left alone" "memprof" } } */
/* { dg-final { scan-tree-dump ":18:10: frames make_index:2:10: 1 context matched \\(0 cold, 0 hot, 1 notcold\\): notcold; left alone" "memprof" } } */
