/* Where context_main.c's blocks went, in the hinted build: the arena of
   each block (jemalloc's arenas.lookup) against the arenas that
   libmemprof_hint's own cold and hot calls use.  Prints
   `arenas: cold blocks C cold H hot D default; hot blocks ...`.  */

#include <stdio.h>
#include <stdlib.h>

#include <jemalloc/jemalloc.h>

#include "memprof/hint.h"

static unsigned
arena_of (void *pointer)
{
  unsigned arena = ~0u;
  size_t length = sizeof arena;
  if (mallctl ("arenas.lookup", &arena, &length, &pointer, sizeof pointer) != 0)
    return ~0u;
  return arena;
}

static void
count (const char *what, void **blocks, int n, unsigned cold, unsigned hot)
{
  int in_cold = 0, in_hot = 0, other = 0;
  for (int i = 0; i < n; i++)
    {
      unsigned arena = arena_of (blocks[i]);
      if (arena == cold)
        in_cold++;
      else if (arena == hot)
        in_hot++;
      else
        other++;
    }
  printf ("%s blocks %d cold %d hot %d default", what, in_cold, in_hot, other);
}

void
report_arenas (void **cold_blocks, int cold_count, void **hot_blocks,
               int hot_count)
{
  void *cold = __memprof_hint_malloc (16, MEMPROF_HINT_COLD);
  void *hot = __memprof_hint_malloc (16, MEMPROF_HINT_HOT);
  unsigned cold_arena = arena_of (cold), hot_arena = arena_of (hot);

  fputs ("arenas: ", stdout);
  count ("cold", cold_blocks, cold_count, cold_arena, hot_arena);
  fputs ("; ", stdout);
  count ("hot", hot_blocks, hot_count, cold_arena, hot_arena);
  putchar ('\n');
  free (cold);
  free (hot);
}
