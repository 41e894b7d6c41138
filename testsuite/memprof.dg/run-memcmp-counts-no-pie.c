/* run-memcmp-counts.c in an executable that is not position-independent:
   the memcmp it passes to __memprof_memcmp is then its PLT entry (the
   function's canonical address), not the interposed memcmp itself, so
   the runtime calls that entry, by a tail call, and the interposed
   memcmp counts the call for its caller, the same counts.  -fno-pie as
   well as -no-pie: code compiled position-independent (GCC's default
   here) reads memcmp's address from the GOT, which holds the interposed
   memcmp itself even in an executable linked -no-pie, and the PLT entry
   would never be passed.

   memcmp called from instrumented code (the plugin's call of
   __memprof_memcmp) counts the bytes to the first difference, included,
   one count per 8 bytes, in both blocks, as the interposed memcmp counts
   them: two 64-byte heap blocks that differ at byte 20 give 3 counts
   each (bytes 0 to 20), twice compared, plus the 64 stores of each
   block's filling loop (-O2 may make it a memset: 8 steps of 8).  The
   result is the C library's.  */
/* { dg-do run } */
/* { dg-options "-O2 -fno-pie -no-pie -fplugin-arg-memprof-dump" } */
/* { dg-memprof-options "print_text=1:write_profile=0" } */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__ ((noipa)) size_t
sixty_four (void)
{
  return 64;
}

__attribute__ ((noipa)) int
compare (const char *a, const char *b, size_t n)
{
  return memcmp (a, b, n);
}

__attribute__ ((noipa)) void
fill (char *p, size_t n)
{
  memset (p, 'x', n);
}

int
main (void)
{
  size_t n = sixty_four ();
  char *a = malloc (n);
  char *b = malloc (n);
  fill (a, n);
  fill (b, n);
  b[20] = 'y';
  int first = compare (a, b, n);
  int second = compare (b, a, n);
  printf ("%d %d\n", (first < 0), (second > 0));
  free (b);
  free (a);
  return 0;
}

/* The contexts in any order.  */
/* { dg-output "(?=.*size \\(ave/min/max\\) 64.00 / 64 / 64\[^\n\]*\n\[^\n\]*access_count \\(ave/min/max\\): 14.00 / 14 / 14\n)(?=.*size \\(ave/min/max\\) 64.00 / 64 / 64\[^\n\]*\n\[^\n\]*access_count \\(ave/min/max\\): 15.00 / 15 / 15\n)(?=.*1 1\n)" } */
