/* Empty spans serve another size class: a million 48-byte blocks (slots
   of 64 bytes) are written and all freed, then blocks of 300 bytes are
   allocated: how many of them lie where the freed 48-byte blocks were.
   Prints the figures; run.py judges them.  */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SMALL_BLOCKS 1000000
#define LARGE_BLOCKS 100000

int
main (void)
{
  static char *small[SMALL_BLOCKS];
  static char *large[LARGE_BLOCKS];
  uintptr_t lowest = UINTPTR_MAX, highest = 0;
  unsigned long sum = 0, inside = 0;

  for (size_t i = 0; i < SMALL_BLOCKS; i++)
    {
      small[i] = malloc (48);
      if (small[i] == NULL)
        return 1;
      memset (small[i], (int) i, 48);
      if ((uintptr_t) small[i] < lowest)
        lowest = (uintptr_t) small[i];
      if ((uintptr_t) small[i] > highest)
        highest = (uintptr_t) small[i];
    }
  for (size_t i = 0; i < SMALL_BLOCKS; i++)
    {
      sum += (unsigned char) small[i][47];
      free (small[i]);
    }
  for (size_t i = 0; i < LARGE_BLOCKS; i++)
    {
      large[i] = malloc (300);
      if (large[i] == NULL)
        return 1;
      memset (large[i], 1, 300);
      inside
          += (uintptr_t) large[i] >= lowest && (uintptr_t) large[i] <= highest;
    }
  for (size_t i = 0; i < LARGE_BLOCKS; i++)
    free (large[i]);
  printf ("%lu of %d later blocks where the freed ones were; checksum %lu\n",
          inside, LARGE_BLOCKS, sum);
  return 0;
}
