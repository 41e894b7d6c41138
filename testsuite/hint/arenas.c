/* Cold hints (0..127) share one jemalloc arena, hot hints (128..255)
   another; unhinted allocations, interleaved with hinted ones, stay in
   jemalloc's own arenas; the two arenas are made at the first hinted
   allocation of their class, not before.  */

#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "memprof/hint.h"

#include "check.h"

static const size_t sizes[]
    = { 8, 48, 100, 1000, 14336, 40000, 1 << 20, 16 << 20 };
#define SIZES (sizeof sizes / sizeof sizes[0])

int
main (void)
{
  unsigned before = arenas_now (), cold, hot, count;
  void *block;
  int placed;

  block = malloc (64);
  free (block);
  CHECK (arenas_now () == before,
         "no arena is made before the first hinted allocation (%u)",
         arenas_now ());

  block = __memprof_hint_malloc (64, MEMPROF_HINT_COLD);
  cold = arena_of (block);
  free (block);
  count = arenas_now ();
  CHECK (count == before + 1, "the first cold allocation makes one arena");
  block = __memprof_hint_malloc (64, MEMPROF_HINT_HOT);
  hot = arena_of (block);
  free (block);
  CHECK (arenas_now () == before + 2,
         "the first hot allocation makes the second");
  CHECK (cold != hot && cold >= automatic_arenas ()
             && hot >= automatic_arenas (),
         "cold (%u) and hot (%u) arenas are distinct, and none of the "
         "automatic ones (0..%u)",
         cold, hot, automatic_arenas () - 1);

  placed = 1;
  for (unsigned value = 0; value < 256; value++)
    {
      block = __memprof_hint_malloc (32, (unsigned char) value);
      placed &= arena_of (block) == (value < 128 ? cold : hot);
      free (block);
    }
  CHECK (placed, "hints 0..127 go to the cold arena, 128..255 to the hot");

  /* Every size, hinted and plain interleaved, nothing freed, so no block
     comes back through a thread cache.  */
  for (size_t i = 0; i < SIZES; i++)
    {
      size_t size = sizes[i];
      int rounds = size > 100000 ? 4 : 200, cold_ok = 1, hot_ok = 1;
      int plain_ok = 1;
      void **kept = calloc (3 * rounds, sizeof *kept);

      for (int round = 0; round < rounds; round++)
        {
          void *c = __memprof_hint_malloc (size, MEMPROF_HINT_COLD);
          void *p = malloc (size);
          void *h = __memprof_hint_malloc (size, MEMPROF_HINT_HOT);
          unsigned plain_arena = arena_of (p);

          cold_ok &= arena_of (c) == cold;
          hot_ok &= arena_of (h) == hot;
          plain_ok &= plain_arena != cold && plain_arena != hot
                      && plain_arena != UINT_MAX;
          kept[3 * round] = c, kept[3 * round + 1] = p, kept[3 * round + 2] = h;
        }
      CHECK (cold_ok && hot_ok,
             "%d x %zu bytes: every cold block in the cold arena, every "
             "hot one in the hot arena",
             rounds, size);
      CHECK (plain_ok,
             "%d x %zu bytes: plain malloc between hinted ones stays out "
             "of both",
             rounds, size);
      for (int j = 0; j < 3 * rounds; j++)
        free (kept[j]);
      free (kept);
    }

  /* Hot small blocks allocated one after another are packed: 1000 blocks
     of 48 bytes fill about 12 pages, even with plain and cold blocks of
     the same size allocated in between.  */
  {
    enum
    {
      COUNT = 1000
    };
    static void *hot_blocks[COUNT], *others[2 * COUNT];
    static uintptr_t pages[COUNT];
    size_t distinct = 0;

    for (int j = 0; j < COUNT; j++)
      {
        others[2 * j] = malloc (48);
        hot_blocks[j] = __memprof_hint_malloc (48, MEMPROF_HINT_HOT);
        others[2 * j + 1] = __memprof_hint_malloc (48, MEMPROF_HINT_COLD);
        pages[j] = (uintptr_t) hot_blocks[j] >> 12;
      }
    for (int j = 0; j < COUNT; j++)
      {
        int seen = 0;
        for (int k = 0; k < j && !seen; k++)
          seen = pages[k] == pages[j];
        distinct += !seen;
      }
    CHECK (distinct <= (COUNT * 48 + 4095) / 4096 + 2,
           "1000 hot 48-byte blocks among 2000 others span %zu pages "
           "(at most %d)",
           distinct, (COUNT * 48 + 4095) / 4096 + 2);
    for (int j = 0; j < COUNT; j++)
      free (hot_blocks[j]), free (others[2 * j]), free (others[2 * j + 1]);
  }

  /* Freed hinted blocks go through the thread cache like any block: how
     many the next plain mallocs of the size reuse (information only,
     docs/hint.md).  */
  {
    void *blocks[100];
    int reused = 0;

    for (int j = 0; j < 100; j++)
      blocks[j] = __memprof_hint_malloc (80, MEMPROF_HINT_HOT);
    for (int j = 0; j < 100; j++)
      free (blocks[j]);
    for (int j = 0; j < 100; j++)
      {
        blocks[j] = malloc (80);
        reused += arena_of (blocks[j]) == hot;
      }
    for (int j = 0; j < 100; j++)
      free (blocks[j]);
    printf ("INFO: after 100 hot 80-byte blocks are freed, %d of the next "
            "100 plain malloc (80) reuse them\n",
            reused);
  }
  printf ("arenas done: %d failed\n", check_failures);
  return check_failures != 0;
}
