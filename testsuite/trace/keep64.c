/* Keeps 64 MiB live (testsuite/trace/replay_rss.py): blocks of five
   sizes, from 100 bytes to 200 KiB, allocated in turn and written until
   64 MiB are live, then all freed.  Its native max RSS is about 65 MiB:
   a replay of its trace that writes its blocks must need at least the
   64 MiB too, whatever the allocator.  */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIVE (64UL << 20)

int
main (void)
{
  static const size_t sizes[] = { 100, 1000, 4000, 30000, 200000 };
  static void *blocks[1 << 16];
  size_t count = 0, live = 0;
  unsigned long sum = 0;

  while (live < LIVE && count < sizeof blocks / sizeof blocks[0])
    {
      size_t size = sizes[count % 5];
      if (live + size > LIVE)
        size = LIVE - live;
      blocks[count] = malloc (size);
      memset (blocks[count], (int) count, size);
      live += size;
      count++;
    }
  for (size_t i = 0; i < count; i++)
    {
      sum += ((unsigned char *) blocks[i])[0];
      free (blocks[i]);
    }
  printf ("%zu blocks, %zu bytes live at most, sum %lu\n", count, live, sum);
  return 0;
}
