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
   bench/hint_path.py times it.  */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
  CONTEXT
};

static enum variant variant;
static int hint = -1;
static uint64_t *table;

__attribute__ ((noinline)) static void *
allocate (size_t size)
{
  void *block;

  if (variant == PLAIN)
    block = malloc (size);
  else if (variant == HINTED)
    block = __memprof_hint_malloc (size, (unsigned char) hint);
  else
    block = __memprof_hint_context_malloc (size, table);
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
                       "context-default\n");
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
  else
    variant = PLAIN;
  for (long i = 0; i < PAIRS; i++)
    {
      size_t size = 16 + (size_t) (i & 7) * 16;
      void *block = allocate_from_callers_caller (size);
      *(volatile char *) block = 1;
      unsigned slot = (unsigned) (i * 7) & (KEPT - 1);
      free (kept[slot]);
      kept[slot] = block;
    }
  for (int slot = 0; slot < KEPT; slot++)
    free (kept[slot]);
  return 0;
}
