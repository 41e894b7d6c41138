/* realloc of hinted blocks (docs/hint.md, "Realloc"): the library's own
   realloc keeps a hinted block in its class and never lets it reach
   jemalloc's automatic thread cache, where plain mallocs would take it;
   a context-classified realloc whose context is of the default class
   moves a hinted block to the default arenas, its old block given back
   to its class; a hinted block freed beyond what its bin keeps goes to
   jemalloc's free.  Every check counts blocks by the arena jemalloc says
   holds them, so each fails when a hinted block leaks out of its class
   (as it did when jemalloc's realloc served the program).  */

#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "memprof/hint.h"
#include "memprof/hint_context.h"

#include "check.h"

#define BLOCKS 100
/* The blocks a thread's bin keeps (cache.c's CACHE_BLOCKS), and as many
   as always fit it, whatever its last batch (at most 16 blocks, one
   handed out) left in it.  */
#define BIN_BLOCKS 64
#define BIN_FITS (BIN_BLOCKS - 15)

static int
filled (const unsigned char *block, size_t size, unsigned char value)
{
  for (size_t i = 0; i < size; i++)
    if (block[i] != value)
      return 0;
  return 1;
}

/* A table no stack matches (its one entry's frames are no return
   address's): every context of it is of the default class.  */
static uint64_t default_table[MEMPROF_CONTEXT_HEADER_WORDS + 2] = {
  MEMPROF_CONTEXT_MAGIC << 32 | MEMPROF_CONTEXT_VERSION,
  (uint64_t) 1 << 32 | 1,
};

int
main (void)
{
  unsigned cold, hot;
  void *block, *blocks[BLOCKS];
  int placed, kept;

  block = __memprof_hint_malloc (64, MEMPROF_HINT_COLD);
  cold = arena_of (block);
  free (block);
  block = __memprof_hint_malloc (64, MEMPROF_HINT_HOT);
  hot = arena_of (block);
  free (block);

  /* A plain realloc grows a hinted block in its class, its bytes kept.  */
  block = __memprof_hint_malloc (48, MEMPROF_HINT_COLD);
  memset (block, 0x5a, 48);
  block = realloc (block, 4000);
  CHECK (block != NULL && arena_of (block) == cold && filled (block, 48, 0x5a),
         "a cold block grown by realloc (48 to 4000 bytes) stays in the cold "
         "arena, its bytes kept");
  block = realloc (block, 24);
  CHECK (block != NULL && arena_of (block) == cold && filled (block, 24, 0x5a),
         "shrunk by realloc (to 24 bytes), it stays in the cold arena");
  free (block);

  /* The old blocks of hinted blocks moved by realloc: not reused by plain
     mallocs of their size.  */
  placed = 1;
  for (int i = 0; i < BLOCKS; i++)
    {
      blocks[i] = __memprof_hint_malloc (80, MEMPROF_HINT_HOT);
      memset (blocks[i], i, 80);
      blocks[i] = realloc (blocks[i], 200);
      placed &= blocks[i] != NULL && arena_of (blocks[i]) == hot
                && filled (blocks[i], 80, (unsigned char) i);
    }
  CHECK (placed,
         "%d hot 80-byte blocks grown to 200 bytes by realloc stay "
         "in the hot arena, their bytes kept",
         BLOCKS);
  kept = plain_in_arena (80, BLOCKS, hot);
  CHECK (kept == 0,
         "none of the next %d plain malloc (80) reuses their old blocks (%d "
         "did)",
         BLOCKS, kept);
  for (int i = 0; i < BLOCKS; i++)
    free (blocks[i]);

  /* realloc (p, 0) of a hinted block frees it into its class (jemalloc's
     default opt.zero_realloc: free), as many as its bin keeps.  */
  for (int i = 0; i < BIN_FITS; i++)
    blocks[i] = __memprof_hint_malloc (96, MEMPROF_HINT_COLD);
  placed = 1;
  for (int i = 0; i < BIN_FITS; i++)
    placed &= realloc (blocks[i], 0) == NULL;
  kept = plain_in_arena (96, BLOCKS, cold);
  CHECK (placed && kept == 0,
         "realloc (p, 0) of %d cold blocks returns NULL, and none of the next "
         "%d plain malloc (96) reuses them (%d did)",
         BIN_FITS, BLOCKS, kept);
  block = __memprof_hint_malloc (96, MEMPROF_HINT_COLD);
  kept = 0;
  for (int i = 0; i < BIN_FITS; i++)
    kept |= block == blocks[i];
  CHECK (kept, "the next cold malloc (96) takes one of them back (from the "
               "thread's cold cache)");
  free (block);

  /* Beyond what its bin keeps, a freed hinted block goes to jemalloc's own
     free (its fast path, the thread's automatic cache: a program giving
     back its blocks at exit), where plain mallocs of its size take it:
     of 100 freed, the bin keeps 64 less what its last batch left in it
     (at most 31: a batch is at most 32 blocks, one handed out).  */
  for (int i = 0; i < BLOCKS; i++)
    blocks[i] = __memprof_hint_malloc (128, MEMPROF_HINT_COLD);
  for (int i = 0; i < BLOCKS; i++)
    free (blocks[i]);
  kept = plain_in_arena (128, BLOCKS, cold);
  CHECK (kept >= BLOCKS - BIN_BLOCKS && kept <= BLOCKS - BIN_BLOCKS + 31,
         "of %d cold blocks freed, those beyond the bin's %d go to jemalloc's "
         "free: the next %d plain malloc (128) reuse %d of them (%d to %d)",
         BLOCKS, BIN_BLOCKS, BLOCKS, kept, BLOCKS - BIN_BLOCKS,
         BLOCKS - BIN_BLOCKS + 31);

  /* A context-classified realloc that decides the default class moves a
     hinted block out of its arena, and gives the old one back to it.  */
  placed = 1;
  for (int i = 0; i < BLOCKS; i++)
    {
      blocks[i] = __memprof_hint_malloc (112, MEMPROF_HINT_HOT);
      memset (blocks[i], i, 112);
      blocks[i]
          = __memprof_hint_context_realloc (blocks[i], 300, default_table);
      placed &= blocks[i] != NULL && arena_of (blocks[i]) != hot
                && arena_of (blocks[i]) != cold
                && filled (blocks[i], 112, (unsigned char) i);
    }
  kept = plain_in_arena (112, BLOCKS, hot);
  CHECK (placed && kept == 0,
         "%d hot blocks reallocated by a context of the default class move to "
         "the default arenas, their bytes kept; none of the next %d plain "
         "malloc (112) reuses their old blocks (%d did)",
         BLOCKS, BLOCKS, kept);
  for (int i = 0; i < BLOCKS; i++)
    free (blocks[i]);

  /* Plain blocks: jemalloc's realloc, as without the library.  */
  block = malloc (40);
  memset (block, 0x33, 40);
  block = realloc (block, 5000);
  CHECK (block != NULL && arena_of (block) != cold && arena_of (block) != hot
             && filled (block, 40, 0x33),
         "a plain block grown by realloc stays plain, its bytes kept");
  free (block);
  block = realloc (NULL, 70);
  CHECK (block != NULL && arena_of (block) != cold && arena_of (block) != hot,
         "realloc (NULL, 70) is a plain malloc");
  free (block);

  /* A context-classified realloc (NULL, SIZE) of the default class is
     malloc (SIZE) (the library calls jemalloc's malloc directly): a
     block of at least SIZE bytes, apart from the others; SIZE 0 a block,
     as malloc (0).  (Its arena is not tested: a plain malloc may take a
     hinted block that a full bin handed to jemalloc's free.)  */
  placed = 1;
  for (int i = 0; i < BLOCKS; i++)
    {
      size_t size = (size_t) i * 97;

      blocks[i] = __memprof_hint_context_realloc (NULL, size, default_table);
      placed &= blocks[i] != NULL && sallocx (blocks[i], 0) >= size;
      if (blocks[i] != NULL)
        memset (blocks[i], i, size);
    }
  for (int i = 0; i < BLOCKS; i++)
    placed &= blocks[i] != NULL && filled (blocks[i], (size_t) i * 97, i);
  CHECK (placed,
         "%d context-classified realloc (NULL, 0 to %d) of the default class: "
         "blocks of at least their sizes, their bytes kept",
         BLOCKS, (BLOCKS - 1) * 97);
  for (int i = 0; i < BLOCKS; i++)
    free (blocks[i]);

  puts ("realloc done");
  return check_failures != 0;
}
