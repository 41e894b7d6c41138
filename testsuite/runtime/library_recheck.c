/* Library calls counted again after count_library_accesses is set back
   to 1 while the program runs (runtime/interceptors.c): the first strlen
   calls, made while the option is 0, send strlen straight to the C
   library's; setting the option must bring the counting path back.
   quiet's block and counted's block are filled alike by instrumented
   code; only counted's is read by strlen calls that count, 100 calls of
   16 bytes each: 2 counts each (one per 8 bytes).  */
#include <memprof/interface.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CALLS 100

static __attribute__ ((noinline)) char *
fill (char *block)
{
  for (int i = 0; i < 15; i++)
    block[i] = 'a' + i;
  block[15] = '\0';
  return block;
}

static __attribute__ ((noinline)) char *
quiet (void)
{
  return fill (malloc (16));
}

static __attribute__ ((noinline)) char *
counted (void)
{
  return fill (malloc (16));
}

int
main (void)
{
  size_t total = 0;
  /* volatile: GCC would make one call of each loop's strlen.  */
  char *volatile first = quiet (), *volatile second = counted ();
  if (memprof_set_option ("count_library_accesses=0") != 0)
    return 1;
  for (int i = 0; i < CALLS; i++)
    total += strlen (first);
  if (memprof_set_option ("count_library_accesses=1") != 0)
    return 1;
  for (int i = 0; i < CALLS; i++)
    total += strlen (second);
  printf ("%zu\n", total);
  free (first);
  free (second);
  return 0;
}
