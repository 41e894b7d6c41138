/* The default thresholds, relative to the run: the profile's run lasts
   300 s (its last free); the median accessed byte has a density of 10
   accesses per byte per second (make_index's 256 bytes, against
   make_record's 128 at 0.5).  make_record's contexts live 300 s on
   average (at least 10% of the run) at 0.5 (below 0.25 times the
   median): cold.  make_index's are neither (10 is not above 4 times the
   median).  LLVM's thresholds (use-threshold-default.c) call both
   notcold.  */
/* { dg-do compile } */

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

/* { dg-final { scan-tree-dump ":16:10: frames make_record:2:10: 1 context matched \\(1 cold, 0 hot, 0 notcold\\): cold; calls the hinted entry point" "memprof" } } */
/* { dg-final { scan-tree-dump ":22:10: frames make_index:2:10: 1 context matched \\(0 cold, 0 hot, 1 notcold\\): notcold; left alone" "memprof" } } */
