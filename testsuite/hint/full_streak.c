/* A full streak (docs/hint.md, "Cost"; cache.c): once a class's frees
   have found their bins full many times in a row (a program giving back
   its blocks), its frees go to jemalloc's free without asking the block's
   size, but one in 64 looks again, and a bin with room ends the streak.
   So after a teardown the bins take hinted blocks again: the next plain
   mallocs of their size get none of them.  The check fails if the streak
   never ends (every hinted block freed after it reaches jemalloc's
   automatic cache, where plain mallocs take them) or if a bin with room
   is skipped.  */

#include <stdlib.h>

#include "memprof/hint.h"

#include "check.h"

#define SIZE 48
/* Far more than a bin keeps (64): a streak of 64 full frees and more.  */
#define TEARDOWN 1000
/* As many as a bin keeps and a streak's check comes within.  */
#define ROUND 64
/* As many as always fit a bin, whatever its last batch (at most 32
   blocks, one handed out) left in it.  */
#define BIN_FITS (ROUND - 31)

static void *blocks[TEARDOWN];

int
main (void)
{
  unsigned cold;
  int taken;

  /* A teardown: many hinted blocks freed in a row.  */
  for (int i = 0; i < TEARDOWN; i++)
    blocks[i] = __memprof_hint_malloc (SIZE, MEMPROF_HINT_COLD);
  cold = arena_of (blocks[0]);
  for (int i = 0; i < TEARDOWN; i++)
    free (blocks[i]);
  taken = plain_in_arena (SIZE, ROUND, cold);
  CHECK (taken > 0,
         "after %d cold blocks freed in a row, plain malloc (%d) takes some "
         "of those beyond the bin (%d of %d): jemalloc's free had them",
         TEARDOWN, SIZE, taken, ROUND);
  /* A round of hinted pairs: its frees find the bin with room, and one
     of them, looking again, ends the streak (the others went on to
     jemalloc's free: its thread cache is flushed of them).  Then rounds
     that must all go to the bin.  */
  for (int round = 0; round < 3; round++)
    {
      int count = round == 0 ? ROUND : BIN_FITS;

      for (int i = 0; i < count; i++)
        blocks[i] = __memprof_hint_malloc (SIZE, MEMPROF_HINT_COLD);
      for (int i = 0; i < count; i++)
        free (blocks[i]);
      if (round == 0)
        mallctl ("thread.tcache.flush", NULL, NULL, NULL, 0);
    }
  taken = plain_in_arena (SIZE, ROUND, cold);
  CHECK (taken == 0,
         "after the streak ends, the cold blocks freed go to the bin again: "
         "plain malloc (%d) takes none of them (%d of %d did)",
         SIZE, taken, ROUND);
  puts ("full_streak done");
  return check_failures != 0;
}
