/* A program that defines memcmp itself has its own called, from code
   the plugin instrumented too: the call the plugin sends to
   __memprof_memcmp passes memcmp as the program binds it, and the
   runtime calls that one (the C library's would return a negative
   number here: this memcmp answers 42 whatever it compares).  */
/* { dg-do run } */
/* { dg-memprof-options "write_profile=0" } */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__ ((noipa)) int
memcmp (const void *a, const void *b, size_t n)
{
  (void) a;
  (void) b;
  (void) n;
  return 42;
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
  printf ("%d\n", memcmp (a, b, n));
  free (b);
  free (a);
  return 0;
}

/* { dg-output "42\n" } */
