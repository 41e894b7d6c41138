/* In callbacks mode the runtime hooks count exactly as the inline code
   does: 10 stores and 20 loads through non-inlined accessors give 30
   accesses to the 40-byte block, at every level.  */
/* { dg-do run } */
/* { dg-options "-fplugin-arg-memprof-dump -fplugin-arg-memprof-callbacks" } */
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
  int *block = malloc (10 * sizeof (int));
  int sum = 0;
  for (int i = 0; i < 10; i++)
    put (block, i);
  for (int round = 0; round < 2; round++)
    for (int i = 0; i < 10; i++)
      sum += get (block, i);
  free (block);
  return sum == 90 ? 0 : 1;
}

/* { dg-final { scan-tree-dump-times "memprof: instrument " 2 "memprof" } } */
/* { dg-output "alloc_count 1, size \\(ave/min/max\\) 40.00 / 40 / 40\[^\\n\]*\n\[^\\n\]*access_count \\(ave/min/max\\): 30.00 / 30 / 30" } */
