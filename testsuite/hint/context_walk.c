/* The context-classified entry points' walk reads exactly its table's
   depth of caller frames, at every depth from 1 to the most a table may
   have (the walk is unrolled, entered at its depth's step): climb ()
   calls itself through one call site at every level but one, SPLIT,
   where VARIANT picks another.  The walk's frame K returns into level
   K, so the two variants are two calling contexts for a table whose
   depth is above SPLIT and one context for a table whose depth is not.
   Each table here has one entry with no keys (it matches any context):
   every valid table allocates cold.  run.py runs this program with
   MEMPROF_HINT_DEBUG=1 and counts the decisions (one a distinct
   context, in the cache of decisions) of each table, named "depth D
   split S" on stderr; a table of no valid depth (0, above the most)
   allocates in jemalloc's default arenas.  Built without inlining or
   tail calls, with frame pointers (run.py's flags).  */

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "memprof/hint.h"
#include "memprof/hint_context.h"

#include "check.h"

/* Levels of climb () above the allocating function: more than the
   deepest walk reads.  */
#define LEVELS (MEMPROF_CONTEXT_MAX_DEPTH + 2)
#define CALLS 3

struct table
{
  uint64_t words[MEMPROF_CONTEXT_HEADER_WORDS + 1 + MEMPROF_CONTEXT_MAX_DEPTH];
  char name[32];
};

static void
make_table (struct table *table, unsigned depth, unsigned split)
{
  snprintf (table->name, sizeof table->name, "depth %u split %u", depth, split);
  for (unsigned i = 0; i < sizeof table->words / sizeof table->words[0]; i++)
    table->words[i] = 0;
  table->words[MEMPROF_CONTEXT_WORD_HEADER]
      = MEMPROF_CONTEXT_MAGIC << 32 | MEMPROF_CONTEXT_VERSION;
  table->words[MEMPROF_CONTEXT_WORD_SHAPE] = depth | (uint64_t) 1 << 32;
  table->words[MEMPROF_CONTEXT_WORD_NAME] = (uint64_t) (uintptr_t) table->name;
  /* One entry: cold, its keys 0 (any frame).  */
  table->words[MEMPROF_CONTEXT_HEADER_WORDS] = MEMPROF_HINT_COLD;
}

/* The allocating function: its caller's return address is the walk's
   frame 0.  */
static void *__attribute__ ((noinline)) allocate (uint64_t *table)
{
  return __memprof_hint_context_malloc (24, table);
}

static void *__attribute__ ((noinline))
climb (unsigned level, unsigned split, int variant, uint64_t *table)
{
  void *block;

  if (level == 0)
    {
      if (split == 0 && variant)
        block = allocate (table);
      else
        block = allocate (table);
    }
  else if (level == split && variant)
    block = climb (level - 1, split, variant, table);
  else
    block = climb (level - 1, split, variant, table);
  __asm__ volatile("" : : "r"(block) : "memory");
  return block;
}

/* A thread's stack holds few frames: a walk of the deepest table ends
   where its frames end, above climb (2, ...), and still tells apart the
   two contexts that part at its frame 1 (table "shallow 12 split 1").  */
static void *
shallow_thread (void *data)
{
  uint64_t *table = data;
  uintptr_t wrong = 0;
  void *reference = __memprof_hint_malloc (24, MEMPROF_HINT_COLD);

  for (int variant = 0; variant < 2; variant++)
    for (int call = 0; call < CALLS; call++)
      {
        void *block = climb (2, 1, variant, table);

        wrong += block == NULL || arena_of (block) != arena_of (reference);
        free (block);
      }
  free (reference);
  return (void *) wrong;
}

int
main (void)
{
  static struct table tables[MEMPROF_CONTEXT_MAX_DEPTH + 1][2];
  static struct table invalid[2];
  void *reference = __memprof_hint_malloc (24, MEMPROF_HINT_COLD);
  unsigned cold_arena = arena_of (reference);
  unsigned wrong = 0, blocks = 0;

  for (unsigned depth = 1; depth <= MEMPROF_CONTEXT_MAX_DEPTH; depth++)
    for (unsigned side = 0; side < 2; side++)
      {
        /* The split just inside the walk, then just beyond it.  */
        struct table *table = &tables[depth][side];

        make_table (table, depth, depth - 1 + side);
        for (int variant = 0; variant < 2; variant++)
          for (int call = 0; call < CALLS; call++)
            {
              void *block
                  = climb (LEVELS, depth - 1 + side, variant, table->words);
              wrong += block == NULL || arena_of (block) != cold_arena;
              blocks++;
              free (block);
            }
      }
  CHECK (wrong == 0,
         "tables of depth 1 to %d: all %u blocks of their cold contexts in "
         "the cold arena (%u not)",
         MEMPROF_CONTEXT_MAX_DEPTH, blocks, wrong);

  {
    static struct table shallow;
    pthread_t thread;
    void *thread_wrong = (void *) 1;

    make_table (&shallow, MEMPROF_CONTEXT_MAX_DEPTH, 1);
    snprintf (shallow.name, sizeof shallow.name, "shallow %d split 1",
              MEMPROF_CONTEXT_MAX_DEPTH);
    if (pthread_create (&thread, NULL, shallow_thread, shallow.words) == 0)
      pthread_join (thread, &thread_wrong);
    CHECK (thread_wrong == NULL,
           "a walk that ends before its table's depth (a thread's shallow "
           "stack): its cold blocks in the cold arena");
  }

  make_table (&invalid[0], 0, 0);
  make_table (&invalid[1], MEMPROF_CONTEXT_MAX_DEPTH + 1, 0);
  for (unsigned i = 0; i < 2; i++)
    {
      unsigned depth = i ? MEMPROF_CONTEXT_MAX_DEPTH + 1 : 0;
      void *block = climb (LEVELS, 0, 0, invalid[i].words);

      CHECK (block != NULL && arena_of (block) != cold_arena
                 && arena_of (block) < automatic_arenas (),
             "a table of depth %u (none valid) allocates in jemalloc's "
             "default arenas (arena %u)",
             depth, arena_of (block));
      free (block);
    }
  free (reference);
  printf ("context_walk done\n");
  return check_failures != 0;
}
