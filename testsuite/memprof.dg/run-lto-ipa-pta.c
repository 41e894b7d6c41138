/* -fipa-pta with -flto: IPA points-to runs in each LTRANS unit, where the
   plugin's start-up constructor is added; it once met the constructor
   before it had a GIMPLE body and crashed (segfault in lto1).  The
   program is run-lto.c's: the exact count also fails if the
   instrumentation was dropped.  */
/* { dg-do run } */
/* { dg-options "-flto -O2 -fipa-pta" } */
/* { dg-memprof-options "print_text=1:write_profile=0" } */

#include "run-lto.c"

/* { dg-output "alloc_count 1, size \\(ave/min/max\\) 48.00 / 48 / 48\[^\\n\]*\n\[^\\n\]*access_count \\(ave/min/max\\): 24.00 / 24 / 24\n" } */
