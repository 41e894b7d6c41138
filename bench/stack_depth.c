/* A malloc/free loop at the bottom of a recursion DEPTH calls deep: every
   allocation has the same deep stack, as in an interpreter's evaluator
   or a recursive-descent parser at its deepest.  Arguments: DEPTH and the
   number of malloc/free pairs.  Prints a checksum.  */
#include <stdio.h>
#include <stdlib.h>

#include "../testsuite/stacks/descend.h"

static long pairs;
static unsigned long checksum;

__attribute__ ((noinline)) static void
allocate_in_loop (void)
{
  for (long i = 0; i < pairs; i++)
    {
      unsigned char *block = malloc (16 + (i & 63));
      /* Opaque to GCC, which would drop a malloc/free pair it sees
         through.  */
      __asm__ volatile("" : "+r"(block) : : "memory");
      block[0] = (unsigned char) i;
      checksum += block[0];
      free (block);
    }
}

DESCEND_THEN (allocate_in_loop)

int
main (int argc, char **argv)
{
  int depth = argc > 1 ? atoi (argv[1]) : 50;
  pairs = argc > 2 ? atol (argv[2]) : 1000000;
  descend (depth);
  printf ("stack_depth %lu\n", checksum);
  return 0;
}
