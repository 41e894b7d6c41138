/* -fipa-pta with -flto: IPA points-to runs in each LTRANS unit, where the
   plugin's start-up constructor is added; it once met the constructor
   before it had a GIMPLE body and crashed (segfault in lto1).  The exact
   count also fails if the instrumentation was dropped.  */
/* { dg-do run } */
/* { dg-options "-flto -O2 -fipa-pta" } */
/* { dg-memprof-options "print_text=1:write_profile=0" } */

#include <stdlib.h>

__attribute__ ((noipa)) void
put (int *p, int i)
{
  p[i] = 2 * i;
}

__attribute__ ((noipa)) int
get (int *p, int i)
{
  return p[i];
}

int
main (void)
{
  int *block = malloc (12 * sizeof (int));
  int sum = 0;
  for (int i = 0; i < 12; i++)
    put (block, i);
  for (int i = 0; i < 12; i++)
    sum += get (block, i);
  free (block);
  return sum == 132 ? 0 : 1;
}

/* { dg-output "alloc_count 1, size \\(ave/min/max\\) 48.00 / 48 / 48\[^\\n\]*\n\[^\\n\]*access_count \\(ave/min/max\\): 24.00 / 24 / 24\n" } */
