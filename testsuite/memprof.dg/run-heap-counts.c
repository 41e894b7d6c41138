/* Exact counts: 10 stores and 10 loads through non-inlined accessors, one
   memset of 40 bytes (5 steps of 8) and one more load after it give 26
   accesses to the block, at every optimisation level.  */
/* { dg-do run } */
/* { dg-memprof-options "print_text=1:write_profile=0" } */

#include <stdlib.h>
#include <string.h>

__attribute__ ((noipa)) void
put (int *p, int i)
{
  p[i] = i;
}

__attribute__ ((noipa)) int
get (int *p, int i)
{
  return p[i];
}

__attribute__ ((noipa)) size_t
forty (void)
{
  return 40;
}

int
main (void)
{
  int *block = malloc (10 * sizeof (int));
  int sum = 0;
  for (int i = 0; i < 10; i++)
    put (block, i);
  for (int i = 0; i < 10; i++)
    sum += get (block, i);
  memset (block, 0, forty ());
  sum += get (block, 9);
  free (block);
  return sum == 45 ? 0 : 1;
}

/* { dg-output "alloc_count 1, size \\(ave/min/max\\) 40.00 / 40 / 40\[^\n\]*\n\[^\n\]*access_count \\(ave/min/max\\): 26.00 / 26 / 26" } */
