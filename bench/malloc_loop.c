/* A malloc/free loop for measuring the runtime's cost per allocation:
   ROUNDS allocations of sizes cycling through 16..4096 bytes, each written
   once; WINDOW of them are kept live at a time (freed first-in first-out),
   so both the allocation and the free paths run every round.  Prints a
   checksum so the work cannot be optimized away.  */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 1024

static const size_t sizes[]
    = { 16, 24, 32, 48, 64, 100, 128, 256, 512, 1000, 4096 };

__attribute__ ((noinline)) static char *
allocate_one (size_t size)
{
  char *block = malloc (size);
  block[0] = (char) size;
  return block;
}

int
main (int argc, char **argv)
{
  long rounds = argc > 1 ? atol (argv[1]) : 2000000;
  static char *window[WINDOW];
  unsigned long checksum = 0;

  for (long i = 0; i < rounds; i++)
    {
      size_t slot = (size_t) i % WINDOW;
      if (window[slot] != NULL)
        {
          checksum += (unsigned char) window[slot][0];
          free (window[slot]);
        }
      window[slot] = allocate_one (sizes[i % (sizeof sizes / sizeof sizes[0])]);
    }
  for (size_t slot = 0; slot < WINDOW; slot++)
    free (window[slot]);
  printf ("%lu\n", checksum);
  return 0;
}
