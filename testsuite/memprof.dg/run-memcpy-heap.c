/* memcpy of 256 bytes between two heap blocks, with the length from a
   non-inlined function (so it stays a call with a variable length): the
   range store counts 256 / 8 = 32 at the destination and the range load
   32 at the source.  The source comes from calloc, whose clearing is not
   instrumented; copy_bytes is noipa, so -O2 cannot delete the copy.  */
/* { dg-do run } */
/* { dg-memprof-options "print_text=1:write_profile=0" } */

#include <stdlib.h>
#include <string.h>

__attribute__ ((noipa)) size_t
length (void)
{
  return 256;
}

__attribute__ ((noipa)) void
copy_bytes (char *dst, const char *src, size_t n)
{
  memcpy (dst, src, n);
}

int
main (void)
{
  char *src = calloc (256, 1);
  char *dst = malloc (256);
  copy_bytes (dst, src, length ());
  free (dst);
  free (src);
  return 0;
}

/* { dg-output "size \\(ave/min/max\\) 256.00 / 256 / 256\[^\\n\]*\n\[^\\n\]*access_count \\(ave/min/max\\): 32.00 / 32 / 32\n.*size \\(ave/min/max\\) 256.00 / 256 / 256\[^\\n\]*\n\[^\\n\]*access_count \\(ave/min/max\\): 32.00 / 32 / 32\n" } */
