/* Bit-field accesses to a heap struct: 5 stores and 7 loads of p->b,
   each one GIMPLE access (the read-modify-write of a bit-field store is
   made later, at RTL), give 12 accesses to the 8-byte block.  */
/* { dg-do run } */
/* { dg-memprof-options "print_text=1:write_profile=0" } */

#include <stdlib.h>

struct flags
{
  unsigned a : 3;
  unsigned b : 5;
  int c;
};

__attribute__ ((noipa)) void
set_b (struct flags *p, unsigned v)
{
  p->b = v;
}

__attribute__ ((noipa)) unsigned
get_b (struct flags *p)
{
  return p->b;
}

int
main (void)
{
  struct flags *f = malloc (sizeof *f);
  unsigned sum = 0;
  for (unsigned i = 0; i < 5; i++)
    set_b (f, i + 1);
  for (int i = 0; i < 7; i++)
    sum += get_b (f);
  free (f);
  return sum == 35 ? 0 : 1;
}

/* { dg-output "alloc_count 1, size \\(ave/min/max\\) 8.00 / 8 / 8\[^\\n\]*\n\[^\\n\]*access_count \\(ave/min/max\\): 12.00 / 12 / 12" } */
