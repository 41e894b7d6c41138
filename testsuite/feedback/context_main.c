/* The callers of context_alloc.c's allocator, through its pointer and
   one shared helper, so that only the second caller frame tells the
   contexts apart: cold blocks (kept, never touched), hot blocks (read
   many times, freed at once).  With -DSTALE the cold path's call moves
   three lines down, as an edit after profiling would move it.  The hinted
   build links context_check.c, which reports where the blocks went.  */

#include "context_test.h"

__attribute__ ((noinline)) static void *
make (size_t size)
{
  return allocate (size);
}

__attribute__ ((noinline)) static void
cold_path (void)
{
  for (int i = 0; i < BLOCKS; i++)
#ifndef STALE
    cold_blocks[i] = make (SIZE);
#else
    cold_blocks[i]
        = make (SIZE);
#endif
}

__attribute__ ((noinline)) static unsigned long
hot_path (void)
{
  unsigned long sum = 0;
  for (int i = 0; i < BLOCKS; i++)
    {
      volatile unsigned char *block = make (SIZE);
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
  cold_path ();
  unsigned long sum = hot_path ();
  return finish (sum);
}
