/* A realloc'd block: the 40-byte block gets 10 stores before it is
   reallocated (the runtime's own copy into the new block is not
   instrumented), and the 80-byte block gets 10 more stores and 20
   loads: 30.  The two blocks are two allocation contexts (malloc's and
   realloc's call sites).  */
/* { dg-do run } */
/* { dg-memprof-options "print_text=1:write_profile=0" } */

#include <stdlib.h>

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

int
main (void)
{
  int *p = malloc (10 * sizeof (int));
  int sum = 0;
  for (int i = 0; i < 10; i++)
    put (p, i);
  p = realloc (p, 20 * sizeof (int));
  for (int i = 10; i < 20; i++)
    put (p, i);
  for (int i = 0; i < 20; i++)
    sum += get (p, i);
  free (p);
  return sum == 190 ? 0 : 1;
}

/* The contexts are printed in hash order, which depends on the code
   addresses (ASLR): either order is accepted.  */
/* { dg-output "(size \\(ave/min/max\\) 40.00 / 40 / 40\[^\\n\]*\n\[^\\n\]*access_count \\(ave/min/max\\): 10.00 / 10 / 10\n.*size \\(ave/min/max\\) 80.00 / 80 / 80\[^\\n\]*\n\[^\\n\]*access_count \\(ave/min/max\\): 30.00 / 30 / 30\n|size \\(ave/min/max\\) 80.00 / 80 / 80\[^\\n\]*\n\[^\\n\]*access_count \\(ave/min/max\\): 30.00 / 30 / 30\n.*size \\(ave/min/max\\) 40.00 / 40 / 40\[^\\n\]*\n\[^\\n\]*access_count \\(ave/min/max\\): 10.00 / 10 / 10\n)" } */
