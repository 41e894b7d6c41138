/* LLVM's thresholds by default: a context with a lifetime access density
   of 0.5 accesses per byte per second and a mean lifetime of 300 s is not
   cold (0.5 is over 0.05); with
   -fplugin-arg-memprof-cold-density=1 it is, and with hot-density=0.1 a
   denser one is hot.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-cold-density=1 -fplugin-arg-memprof-hot-density=0.1" } */
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

/* { dg-final { scan-tree-dump ":13:10: frames make_record:2:10: 1 context matched \\(1 cold, 0 hot, 0 notcold\\): cold; calls the hinted entry point" "memprof" } } */
/* { dg-final { scan-tree-dump ":19:10: frames make_index:2:10: 1 context matched \\(0 cold, 1 hot, 0 notcold\\): hot; calls the hinted entry point" "memprof" } } */
