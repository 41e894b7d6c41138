/* Threads: eight threads race to the first hinted allocations (exactly
   two arenas are made, and every thread sees the same ones), then each
   allocates hinted and plain blocks of many sizes, checks their arenas
   and contents, and frees half of them itself and half of another
   thread's.  Every hinted block must be in its arena.  Plain blocks may
   reuse hinted blocks freed on the same thread (jemalloc's thread cache
   is per size class, docs/hint.md): how many do is printed, not
   checked.  */

#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "memprof/hint.h"

#include "check.h"

enum
{
  THREADS = 8,
  BLOCKS = 20000
};

static pthread_barrier_t start, handed_over;
static unsigned first_cold[THREADS], first_hot[THREADS];
static void *blocks[THREADS][BLOCKS];
static size_t block_sizes[THREADS][BLOCKS];
static int misplaced[THREADS], reused[THREADS], corrupted[THREADS];

static void
fill (unsigned char *block, size_t size, uintptr_t seed)
{
  for (size_t i = 0; i < size; i++)
    block[i] = (unsigned char) (seed + i);
}

static int
intact (const unsigned char *block, size_t size, uintptr_t seed)
{
  for (size_t i = 0; i < size; i++)
    if (block[i] != (unsigned char) (seed + i))
      return 0;
  return 1;
}

static void *
worker (void *argument)
{
  int self = (int) (intptr_t) argument, other = (self + 1) % THREADS;
  unsigned random = 12345u + (unsigned) self;
  void *block;

  pthread_barrier_wait (&start);
  block = __memprof_hint_malloc (24, MEMPROF_HINT_COLD);
  first_cold[self] = arena_of (block);
  free (block);
  block = __memprof_hint_malloc (24, MEMPROF_HINT_HOT);
  first_hot[self] = arena_of (block);
  free (block);
  pthread_barrier_wait (&start);

  /* Every later hinted block must be in the arena of this thread's
     first one (main checks that all threads saw the same).  */
  unsigned cold_arena = first_cold[self], hot_arena = first_hot[self];
  for (int i = 0; i < BLOCKS; i++)
    {
      size_t size;
      int kind;
      unsigned arena;

      random = random * 1103515245u + 12345u;
      size = 1 + (random >> 8) % (i % 100 == 0 ? 70000 : 300);
      kind = (random >> 4) % 3;
      block = kind == 0   ? malloc (size)
              : kind == 1 ? __memprof_hint_malloc (size, MEMPROF_HINT_COLD)
                          : __memprof_hint_malloc (size, MEMPROF_HINT_HOT);
      arena = arena_of (block);
      if (kind == 0)
        reused[self] += arena == cold_arena || arena == hot_arena;
      else
        misplaced[self] += arena != (kind == 1 ? cold_arena : hot_arena);
      fill (block, size, (uintptr_t) block);
      blocks[self][i] = block;
      block_sizes[self][i] = size;
      /* Free an older block of its own now and then.  */
      if (i % 2 == 1)
        {
          int j = (int) ((random >> 12) % (unsigned) i);
          if (blocks[self][j] != NULL)
            {
              if (!intact (blocks[self][j], block_sizes[self][j],
                           (uintptr_t) blocks[self][j]))
                corrupted[self]++;
              free (blocks[self][j]);
              blocks[self][j] = NULL;
            }
        }
    }
  pthread_barrier_wait (&handed_over);
  /* Free what the next thread left, from this one.  */
  for (int i = 0; i < BLOCKS; i++)
    if (blocks[other][i] != NULL)
      {
        if (!intact (blocks[other][i], block_sizes[other][i],
                     (uintptr_t) blocks[other][i]))
          corrupted[self]++;
        free (blocks[other][i]);
      }
  return NULL;
}

int
main (void)
{
  pthread_t threads[THREADS];
  unsigned before = arenas_now ();
  int same = 1, misplaced_total = 0, reused_total = 0, corrupted_total = 0;

  pthread_barrier_init (&start, NULL, THREADS + 1);
  pthread_barrier_init (&handed_over, NULL, THREADS);
  for (int t = 0; t < THREADS; t++)
    pthread_create (&threads[t], NULL, worker, (void *) (intptr_t) t);
  pthread_barrier_wait (&start);
  /* The workers have made their first allocations.  */
  pthread_barrier_wait (&start);
  for (int t = 0; t < THREADS; t++)
    pthread_join (threads[t], NULL);
  for (int t = 0; t < THREADS; t++)
    same &= first_cold[t] == first_cold[0] && first_hot[t] == first_hot[0];
  for (int t = 0; t < THREADS; t++)
    {
      misplaced_total += misplaced[t];
      reused_total += reused[t];
      corrupted_total += corrupted[t];
    }

  CHECK (arenas_now () == before + 2,
         "8 threads racing to the first hinted allocations make exactly 2 "
         "arenas (%u)",
         arenas_now () - before);
  CHECK (same && first_cold[0] != first_hot[0],
         "every thread's first cold and hot blocks are in the same two "
         "arenas");
  CHECK (misplaced_total == 0,
         "%d blocks allocated by 8 threads, 2/3 of them hinted: %d hinted "
         "ones outside their arena",
         THREADS * BLOCKS, misplaced_total);
  printf ("INFO: %d of about %d plain blocks reused a freed hinted block\n",
          reused_total, THREADS * BLOCKS / 3);
  CHECK (corrupted_total == 0,
         "every block kept its contents until freed, by its thread or "
         "another (%d corrupted)",
         corrupted_total);
  printf ("threads done: %d failed\n", check_failures);
  return check_failures != 0;
}
