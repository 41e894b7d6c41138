/* A struct copy *dst = *src between two heap blocks of a 24-byte struct
   is one GIMPLE statement: one store to dst's block and one load from
   src's block, so each block has exactly 1 access.  */
/* { dg-do run } */
/* { dg-memprof-options "print_text=1:write_profile=0" } */

#include <stdlib.h>

struct triple
{
  long a, b, c;
};

__attribute__ ((noipa)) void
copy (struct triple *dst, const struct triple *src)
{
  *dst = *src;
}

int
main (void)
{
  struct triple *src = calloc (1, sizeof (struct triple));
  struct triple *dst = malloc (sizeof (struct triple));
  copy (dst, src);
  free (dst);
  free (src);
  return 0;
}

/* { dg-output "size \\(ave/min/max\\) 24.00 / 24 / 24\[^\\n\]*\n\[^\\n\]*access_count \\(ave/min/max\\): 1.00 / 1 / 1\n.*size \\(ave/min/max\\) 24.00 / 24 / 24\[^\\n\]*\n\[^\\n\]*access_count \\(ave/min/max\\): 1.00 / 1 / 1\n" } */
