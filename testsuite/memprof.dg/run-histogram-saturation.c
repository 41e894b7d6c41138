/* Histogram mode: one saturating byte counter per 8 bytes.  Each of the
   10 slots of an 80-byte block is read once, then slot 2 599 more times:
   slot 2's counter stops at 255 (MEMPROF_HISTOGRAM_MAX), so the block's
   access count is 9 * 1 + 255 = 264 and its histogram is
   1 1 255 1 1 1 1 1 1 1.  calloc's own clearing is done inside the
   runtime, which is not instrumented.  */
/* { dg-do run } */
/* { dg-options "-fplugin-arg-memprof-dump -fplugin-arg-memprof-histogram" } */
/* { dg-memprof-options "histogram=1:print_text=1:write_profile=0" } */

#include <stdlib.h>

__attribute__ ((noipa)) long
get (const long *p, int i)
{
  return p[i];
}

int
main (void)
{
  long *block = calloc (10, sizeof (long));
  long sum = 0;
  for (int i = 0; i < 10; i++)
    sum += get (block, i);
  for (int i = 0; i < 599; i++)
    sum += get (block, 2);
  free (block);
  return sum == 0 ? 0 : 1;
}

/* { dg-output "alloc_count 1, size \\(ave/min/max\\) 80.00 / 80 / 80\[^\\n\]*\n\[^\\n\]*access_count \\(ave/min/max\\): 264.00 / 264 / 264.*AccessCountHistogram\\\[10\\\]: 1 1 255 1 1 1 1 1 1 1\n" } */
