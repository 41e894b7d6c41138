/* A program that defines memcmp itself has its own called, from code
   the plugin instrumented too: the call the plugin sends to
   __memprof_memcmp passes memcmp as the program binds it, and the
   runtime calls that one (its calls are read through a function GCC
   cannot see into, since GCC takes memcmp for a pure function).  The
   runtime's own calls of memcmp reach it too, so it must be right.  */
/* { dg-do run } */
/* { dg-memprof-options "write_profile=0" } */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int own_calls;

__attribute__ ((noipa)) int
memcmp (const void *a, const void *b, size_t n)
{
  const unsigned char *x = a, *y = b;
  own_calls++;
  for (size_t i = 0; i < n; i++)
    if (x[i] != y[i])
      return x[i] < y[i] ? -1 : 1;
  return 0;
}

__attribute__ ((noipa)) int
calls (void)
{
  return own_calls;
}

__attribute__ ((noipa)) size_t
length (void)
{
  return 16;
}

int
main (void)
{
  size_t n = length ();
  char *a = malloc (n), *b = malloc (n);
  memset (a, 'x', n);
  memset (b, 'x', n);
  b[5] = 'y';
  int before = calls ();
  int result = memcmp (a, b, n);
  int after = calls ();
  printf ("%d %d\n", result, after - before);
  free (b);
  free (a);
  return 0;
}

/* { dg-output "-1 1\n" } */
