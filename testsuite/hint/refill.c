/* A thread's bin of hinted blocks that is empty is refilled in one batch
   (jemalloc's experimental.batch_alloc from the class's explicit tcache),
   not by one mallocx a block: 1600 cold blocks of 48 bytes, all kept,
   cost one batch for at least 24 blocks (the program's own mallctlbymib
   below counts the library's calls, which reach it through the PLT;
   mallocx cannot be counted so: the library takes the object that
   defines it for jemalloc); every block is
   in the cold arena, none is handed out twice, and the blocks of a batch
   come in address order.  A bin is refilled again only when it is empty:
   blocks freed and allocated again come from it with no batch at all.  */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

#include "memprof/hint.h"

#include "check.h"

#define BLOCKS 1600

static unsigned long batches;

/* jemalloc's mallctlbymib, counted: the program's definition comes first
   for libmemprof_hint's calls.  */
int
mallctlbymib (const size_t *mib, size_t length, void *old, size_t *old_length,
              void *new, size_t new_length)
{
  static int (*next) (const size_t *, size_t, void *, size_t *, void *, size_t);

  if (next == NULL)
    next = (int (*) (const size_t *, size_t, void *, size_t *, void *,
                     size_t)) dlsym (RTLD_NEXT, "mallctlbymib");
  batches++;
  return next (mib, length, old, old_length, new, new_length);
}

static int
compare_pointers (const void *a, const void *b)
{
  uintptr_t x = *(const uintptr_t *) a, y = *(const uintptr_t *) b;
  return x < y ? -1 : x > y;
}

int
main (void)
{
  static void *blocks[BLOCKS], *sorted[BLOCKS];
  unsigned cold_arena, misplaced = 0, repeated = 0, ascending = 0;
  unsigned long calls;
  void *first = __memprof_hint_malloc (48, MEMPROF_HINT_COLD);

  cold_arena = arena_of (first);
  CHECK (cold_arena != UINT_MAX && cold_arena >= automatic_arenas (),
         "the cold arena is an arena of its own (%u)", cold_arena);

  batches = 0;
  for (int i = 0; i < BLOCKS; i++)
    blocks[i] = __memprof_hint_malloc (48, MEMPROF_HINT_COLD);
  calls = batches;
  CHECK (calls >= 1 && calls <= BLOCKS / 24,
         "%d cold blocks of 48 bytes kept alive are taken in %lu batches "
         "(1 to %d: at least 24 blocks a batch)",
         BLOCKS, calls, BLOCKS / 24);

  for (int i = 0; i < BLOCKS; i++)
    {
      misplaced += arena_of (blocks[i]) != cold_arena;
      sorted[i] = blocks[i];
      ascending += i > 0 && (char *) blocks[i] > (char *) blocks[i - 1];
    }
  qsort (sorted, BLOCKS, sizeof *sorted, compare_pointers);
  for (int i = 1; i < BLOCKS; i++)
    repeated += sorted[i] == sorted[i - 1];
  CHECK (misplaced == 0, "all %d blocks are in the cold arena (%u are not)",
         BLOCKS, misplaced);
  CHECK (repeated == 0 && sorted[0] != NULL,
         "no block is handed out twice (%u are)", repeated);
  CHECK (ascending >= BLOCKS * 9 / 10,
         "blocks allocated one after another come in address order (%u of "
         "%d steps go up)",
         ascending, BLOCKS - 1);

  /* Freed into the bin of their size, then taken again: no refill.  */
  for (int i = 0; i < 32; i++)
    free (blocks[i]);
  batches = 0;
  for (int i = 0; i < 32; i++)
    blocks[i] = __memprof_hint_malloc (48, MEMPROF_HINT_COLD);
  CHECK (batches == 0,
         "32 cold blocks freed and allocated again come from the thread's "
         "bin (%lu batches)",
         batches);
  for (int i = 0; i < 32; i++)
    misplaced += arena_of (blocks[i]) != cold_arena;
  CHECK (misplaced == 0, "and they are in the cold arena (%u are not)",
         misplaced);

  for (int i = 0; i < BLOCKS; i++)
    free (blocks[i]);
  free (first);
  printf ("refill done\n");
  return check_failures != 0;
}
