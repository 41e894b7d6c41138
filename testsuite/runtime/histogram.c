/* Histogram mode (histogram=1): one saturating byte counter per 8 bytes,
   written as AccessHistogram values.  An 80-byte block: every 8-byte slot
   read once, slot 2 600 times (saturates at 255), slot 9 twice more:
   values 1 1 255 1 1 1 1 1 1 3, TotalAccessCount 266.  */
#include <stdio.h>
#include <stdlib.h>

#include <memprof/abi.h>

static void
hit (const void *address, int times)
{
  for (int i = 0; i < times; i++)
    {
      uint8_t *counter = memprof_histogram_shadow_for (__memprof_shadow_base,
                                                       (uintptr_t) address);
      if (*counter < MEMPROF_HISTOGRAM_MAX)
        ++*counter;
    }
}

int
main (void)
{
  char *block = malloc (80);
  for (int slot = 0; slot < 10; slot++)
    hit (block + 8 * slot, 1);
  hit (block + 16, 599);
  hit (block + 72, 2);
  free (block);
  printf ("histogram done\n");
  return 0;
}
