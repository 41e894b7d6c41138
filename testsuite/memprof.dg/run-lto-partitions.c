/* -flto with several partitions (one per function) and -fipa-pta: every
   LTRANS unit gets the start-up constructor, lowered before IPA
   points-to reads it, and the accessors in their own partitions are
   instrumented (run-lto.c's program: 24 accesses).  */
/* { dg-do run } */
/* { dg-options "-flto -O2 -fipa-pta -flto-partition=max" } */
/* { dg-prune-output "lto-wrapper: \[^\n\]*" } */
/* { dg-memprof-options "print_text=1:write_profile=0" } */

#include "run-lto.c"

/* { dg-output "alloc_count 1, size \\(ave/min/max\\) 48.00 / 48 / 48\[^\\n\]*\n\[^\\n\]*access_count \\(ave/min/max\\): 24.00 / 24 / 24\n" } */
