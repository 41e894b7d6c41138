/* The hot path and main of the clone chain test (lto_chain_record.c):
   blocks read many times; the cold path is lto_chain_cold.c's.  The
   block counts and the end of main are context_test.h's.  */

#include "context_test.h"

void *new_record (size_t size);
void cold_path (void **blocks);

__attribute__ ((noinline)) static unsigned long
hot_path (void)
{
  unsigned long sum = 0;
  for (int i = 0; i < BLOCKS; i++)
    {
      volatile unsigned char *block = new_record (SIZE);
      memset ((void *) block, i, SIZE);
      for (int round = 0; round < 200; round++)
        for (int k = 0; k < SIZE; k += 8)
          sum += block[k];
      hot_blocks[i] = (void *) block;
    }
  return sum;
}

int
main (void)
{
  cold_path (cold_blocks);
  unsigned long sum = hot_path ();
  return finish (sum);
}
