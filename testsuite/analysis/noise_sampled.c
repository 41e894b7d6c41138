/* For test_noise.py: 100 blocks each read exactly 12 times, at one site,
   and one block never touched.  With access_sample_rate=16 a quarter of
   the 12-access blocks get no count at all: they must not be called
   never touched.  */
#include <stdio.h>
#include <stdlib.h>

#define BLOCKS 100

__attribute__ ((noipa)) static long *
twelve_accesses (void)
{
  return malloc (8 * sizeof (long));
}

__attribute__ ((noipa)) static void *
untouched_block (void)
{
  return malloc (4096);
}

int
main (void)
{
  long sum = 0;
  for (int b = 0; b < BLOCKS; b++)
    {
      volatile long *block = twelve_accesses ();
      for (int i = 0; i < 12; i++)
        sum += block[i % 8];
      free ((void *) block);
    }
  free (untouched_block ());
  return sum == 12345 ? 1 : 0;
}
