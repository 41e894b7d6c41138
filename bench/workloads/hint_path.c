/* The cost of a hinted allocation: PAIRS malloc+free pairs of 16 to 128
   bytes, each block kept alive while 63 others are allocated (so frees
   and allocations interleave as in a program), made by malloc (argv[1]
   "plain") or by __memprof_hint_malloc with a hot or cold hint ("hot",
   "cold"), or by __memprof_hint_context_malloc, the entry point of a call
   that profile feedback classifies by its calling context at run time
   ("context-cold": a table whose entry matches every context of depth
   CONTEXT_DEPTH, so each call walks that many frames, probes the cache
   of decisions and allocates cold; "context-default": an entry no
   context matches, so each call is classified and allocates with plain
   malloc).  The allocation is made CONTEXT_DEPTH calls deep in every
   variant.  Build with -fno-omit-frame-pointer, as feedback builds are.
   Where the hinted path's time goes, with jemalloc's own API and no
   libmemprof_hint call: "mallocx" (mallocx (size, 0), then free),
   "tcache-dallocx" (an explicit tcache of this program's, freed into
   it with dallocx), "arena-tcache" (an arena and an explicit tcache of
   this program's, freed with free, as a hinted block is) and
   "arena-tcache-dallocx" (the same, freed into the explicit tcache).
   Built with -DJEMALLOC_ONLY and linked with jemalloc alone, without
   libmemprof_hint (whose free the program's then is), only "plain" and
   the jemalloc API variants run.
   bench/hint_path.py times it.  */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jemalloc/jemalloc.h>

#include "memprof/hint.h"
#include "memprof/hint_context.h"

#define PAIRS 20000000L
#define KEPT 64
#define CONTEXT_DEPTH 3

/* The tables the plugin would emit (include/memprof/hint_context.h): one
   cold entry of CONTEXT_DEPTH keys, all wildcards or all unknown.  */
static uint64_t matching_table[MEMPROF_CONTEXT_HEADER_WORDS + 1 + CONTEXT_DEPTH]
    = { MEMPROF_CONTEXT_MAGIC << 32 | MEMPROF_CONTEXT_VERSION,
        1ULL << 32 | CONTEXT_DEPTH, (uintptr_t) "hint_path.c context-cold",
        [MEMPROF_CONTEXT_HEADER_WORDS] = MEMPROF_HINT_COLD };
static uint64_t other_table[MEMPROF_CONTEXT_HEADER_WORDS + 1 + CONTEXT_DEPTH]
    = { MEMPROF_CONTEXT_MAGIC << 32 | MEMPROF_CONTEXT_VERSION,
        1ULL << 32 | CONTEXT_DEPTH,
        (uintptr_t) "hint_path.c context-default",
        [MEMPROF_CONTEXT_HEADER_WORDS] = MEMPROF_HINT_COLD,
        0x1234,
        0x5678,
        0x9abc };

enum variant
{
  PLAIN,
  HINTED,
  CONTEXT,
  MALLOCX
};

static enum variant variant;
static int hint = -1;
static uint64_t *table;
static int mallocx_flags;      /* MALLOCX */
static int dallocx_flags = -1; /* MALLOCX: -1 frees with free */

__attribute__ ((noinline)) static void *
allocate (size_t size)
{
  void *block;

  if (variant == PLAIN)
    block = malloc (size);
#ifndef JEMALLOC_ONLY
  else if (variant == HINTED)
    block = __memprof_hint_malloc (size, (unsigned char) hint);
  else if (variant == CONTEXT)
    block = __memprof_hint_context_malloc (size, table);
#endif
  else
    block = mallocx (size, mallocx_flags);
  __asm__ volatile("" ::: "memory"); /* no tail call: keep the frame */
  return block;
}

__attribute__ ((noinline)) static void *
allocate_from_caller (size_t size)
{
  void *block = allocate (size);
  __asm__ volatile("" ::: "memory");
  return block;
}

__attribute__ ((noinline)) static void *
allocate_from_callers_caller (size_t size)
{
  void *block = allocate_from_caller (size);
  __asm__ volatile("" ::: "memory");
  return block;
}

int
main (int argc, char **argv)
{
  void *kept[KEPT] = { 0 };

  if (argc != 2)
    {
      fprintf (stderr, "usage: hint_path plain|hot|cold|context-cold|"
                       "context-default|mallocx|tcache-dallocx|arena-tcache|"
                       "arena-tcache-dallocx\n");
      return 2;
    }
  variant = HINTED;
  if (strcmp (argv[1], "hot") == 0)
    hint = MEMPROF_HINT_HOT;
  else if (strcmp (argv[1], "cold") == 0)
    hint = MEMPROF_HINT_COLD;
  else if (strcmp (argv[1], "context-cold") == 0)
    variant = CONTEXT, table = matching_table;
  else if (strcmp (argv[1], "context-default") == 0)
    variant = CONTEXT, table = other_table;
  else if (strncmp (argv[1], "mallocx", 7) == 0
           || strncmp (argv[1], "tcache", 6) == 0
           || strncmp (argv[1], "arena", 5) == 0)
    {
      unsigned arena, tcache;
      size_t length = sizeof arena;

      variant = MALLOCX;
      if (strstr (argv[1], "arena") != NULL)
        {
          if (mallctl ("arenas.create", &arena, &length, NULL, 0) != 0)
            return 1;
          mallocx_flags |= MALLOCX_ARENA (arena);
        }
      length = sizeof tcache;
      if (strstr (argv[1], "tcache") != NULL)
        {
          if (mallctl ("tcache.create", &tcache, &length, NULL, 0) != 0)
            return 1;
          mallocx_flags |= MALLOCX_TCACHE (tcache);
        }
      if (strstr (argv[1], "dallocx") != NULL)
        dallocx_flags = mallocx_flags;
    }
  else
    variant = PLAIN;
  for (long i = 0; i < PAIRS; i++)
    {
      size_t size = 16 + (size_t) (i & 7) * 16;
      void *block = allocate_from_callers_caller (size);
      *(volatile char *) block = 1;
      unsigned slot = (unsigned) (i * 7) & (KEPT - 1);
      if (dallocx_flags == -1 || kept[slot] == NULL)
        free (kept[slot]);
      else
        dallocx (kept[slot], dallocx_flags);
      kept[slot] = block;
    }
  for (int slot = 0; slot < KEPT; slot++)
    free (kept[slot]);
  return 0;
}
