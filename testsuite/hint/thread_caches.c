/* Each thread's hinted allocations go through thread caches of its own,
   one per class, made at its first hinted allocation and given back when
   it exits: 3000 threads, one after another, each allocate hot and cold
   blocks (6000 caches in all, past jemalloc's limit of about 4000 that
   are alive at once), and every block lands in its class's arena; once
   they are gone, jemalloc still has caches to give.  Blocks a thread
   allocates one after another come out of its cache in address order.  */

#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "memprof/hint.h"

#include "check.h"

#define THREADS 3000
#define BLOCKS 16

static unsigned hot_arena, cold_arena;

/* How many times arena ARENA's bin of SIZE-byte regions refilled a thread
   cache, and how many regions it handed out (jemalloc's statistics).  */
static void
bin_counts (unsigned arena, size_t size, uint64_t *fills, uint64_t *regions)
{
  unsigned bins;
  size_t length = sizeof bins;
  uint64_t epoch = 1;
  char name[128];

  *fills = *regions = UINT64_MAX;
  mallctl ("epoch", NULL, NULL, &epoch, sizeof epoch);
  if (mallctl ("arenas.nbins", &bins, &length, NULL, 0) != 0)
    return;
  for (unsigned bin = 0; bin < bins; bin++)
    {
      size_t bin_size;
      length = sizeof bin_size;
      snprintf (name, sizeof name, "arenas.bin.%u.size", bin);
      if (mallctl (name, &bin_size, &length, NULL, 0) != 0 || bin_size != size)
        continue;
      length = sizeof *fills;
      snprintf (name, sizeof name, "stats.arenas.%u.bins.%u.nfills", arena,
                bin);
      mallctl (name, fills, &length, NULL, 0);
      snprintf (name, sizeof name, "stats.arenas.%u.bins.%u.nmalloc", arena,
                bin);
      mallctl (name, regions, &length, NULL, 0);
      return;
    }
}
static unsigned misplaced;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *
worker (void *unused __attribute__ ((unused)))
{
  void *hot[BLOCKS], *cold[BLOCKS];
  unsigned wrong = 0;

  for (int i = 0; i < BLOCKS; i++)
    {
      hot[i] = __memprof_hint_malloc (48, MEMPROF_HINT_HOT);
      cold[i] = __memprof_hint_malloc (48, MEMPROF_HINT_COLD);
    }
  for (int i = 0; i < BLOCKS; i++)
    {
      wrong += arena_of (hot[i]) != hot_arena;
      wrong += arena_of (cold[i]) != cold_arena;
      free (hot[i]);
      free (cold[i]);
    }
  pthread_mutex_lock (&lock);
  misplaced += wrong;
  pthread_mutex_unlock (&lock);
  return NULL;
}

int
main (void)
{
  void *block;
  char *first, *previous;
  int ascending = 1;
  unsigned id;
  size_t length = sizeof id;

  block = __memprof_hint_malloc (48, MEMPROF_HINT_HOT);
  hot_arena = arena_of (block);
  free (block);
  block = __memprof_hint_malloc (48, MEMPROF_HINT_COLD);
  cold_arena = arena_of (block);
  free (block);
  CHECK (hot_arena != cold_arena && hot_arena >= automatic_arenas ()
             && cold_arena >= automatic_arenas (),
         "the hot and cold arenas are arenas of their own (%u, %u)", hot_arena,
         cold_arena);

  first = previous = __memprof_hint_malloc (200, MEMPROF_HINT_HOT);
  for (int i = 1; i < 64; i++)
    {
      char *next = __memprof_hint_malloc (200, MEMPROF_HINT_HOT);
      ascending &= next > previous;
      previous = next;
    }
  uint64_t fills, regions;
  bin_counts (hot_arena, 224, &fills, &regions);
  CHECK (fills >= 1 && fills < 64 && regions >= 64,
         "64 hot allocations of 200 bytes are served by the thread's cache: "
         "the hot arena's bin refilled it %llu times with %llu regions",
         (unsigned long long) fills, (unsigned long long) regions);
  CHECK (ascending,
         "64 hot blocks allocated one after another come in address order "
         "(%p to %p)",
         (void *) first, (void *) previous);

  for (int i = 0; i < THREADS; i++)
    {
      pthread_t thread;
      if (pthread_create (&thread, NULL, worker, NULL) != 0
          || pthread_join (thread, NULL) != 0)
        {
          CHECK (0, "thread %d starts and ends", i);
          return 1;
        }
    }
  CHECK (misplaced == 0,
         "%d threads: each of their %d hinted blocks is in its class's arena "
         "(%u are not)",
         THREADS, 2 * THREADS * BLOCKS, misplaced);
  CHECK (mallctl ("tcache.create", &id, &length, NULL, 0) == 0,
         "after %d threads made and gave back %d caches, jemalloc still has "
         "one to give",
         THREADS, 2 * THREADS);
  printf ("thread_caches done\n");
  return check_failures != 0;
}
