/* With -flto the whole program is one unit: an exported function whose
   only callers pass stack addresses is proven at link time, and no
   executed access of this program reaches the stack (the runtime's
   stats=1 counts them from the shadow).  Without -flto the same function
   is instrumented (instrument-param-exported.c).  */
/* { dg-do run } */
/* { dg-options "-flto -O2" } */
/* { dg-memprof-options "stats=1:write_profile=0" } */

#include <stdio.h>
#include <stdlib.h>

__attribute__ ((noinline)) void
scale (int *values, int count, int factor)
{
  for (int i = 0; i < count; i++)
    values[i] *= factor;
}

__attribute__ ((noinline)) long
total (const int *values, int count)
{
  long sum = 0;
  for (int i = 0; i < count; i++)
    sum += values[i];
  return sum;
}

int
main (int argc, char **argv)
{
  int local[64];
  int *heap = malloc (64 * sizeof (int));
  (void) argv;
  if (heap == NULL)
    return 1;
  for (int i = 0; i < 64; i++)
    local[i] = heap[i] = i + argc;
  scale (local, 64, 3);
  long heap_sum = 0;
  for (int i = 0; i < 64; i++)
    heap_sum += heap[i];
  printf ("%ld %ld\n", total (local, 64), heap_sum);
  fflush (stdout); /* before the runtime's stats line */
  free (heap);
  return 0;
}

/* { dg-output "6240 2080\n" } */
/* { dg-output "memprof: stats: \[0-9\]+ instrumented accesses \[^\\n\]*, stack 0 \\(0.0%\\)" } */
