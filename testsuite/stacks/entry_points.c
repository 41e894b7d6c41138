/* Every allocating entry point of the C library's malloc family, each
   called from a function of its own, at a depth that changes from one
   allocation to the next: the capture starts at the frame of the entry
   point the program called (runtime/stack.c, "The entry's frame"), so
   each allocation's stack must be the one a full unwind gives, under the
   function that called that entry point.  Argument: the deepest level
   (default 12).  Prints the allocations made through each entry point,
   in the order of ENTRY_NAMES.  */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>

#define ROUNDS 400

static const char *const ENTRY_NAMES[]
    = { "by_malloc",         "by_calloc",         "by_realloc",
        "by_reallocarray",   "by_memalign",       "by_aligned_alloc",
        "by_posix_memalign", "by_valloc",         "by_pvalloc" };
#define ENTRIES (sizeof ENTRY_NAMES / sizeof *ENTRY_NAMES)
static long made[ENTRIES];

#define KEEP(block) __asm__ volatile ("" : : "r"(block) : "memory")

/* A function of its own whose allocation is CALL (of SIZE).  */
#define BY(name, call)                                                         \
  __attribute__ ((noinline)) static void *name (size_t size)                   \
  {                                                                            \
    void *block = call;                                                        \
    KEEP (block);                                                              \
    return block;                                                              \
  }

BY (by_malloc, malloc (size))
BY (by_calloc, calloc (2, size))
BY (by_realloc, realloc (NULL, size))
BY (by_reallocarray, reallocarray (NULL, 3, size))
BY (by_memalign, memalign (64, size))
BY (by_aligned_alloc, aligned_alloc (32, size))
BY (by_valloc, valloc (size))
BY (by_pvalloc, pvalloc (size))

__attribute__ ((noinline)) static void *
by_posix_memalign (size_t size)
{
  void *block = NULL;
  if (posix_memalign (&block, 128, size) != 0)
    block = NULL;
  KEEP (block);
  return block;
}

static void *(*const ENTRY_CALLS[]) (size_t)
    = { by_malloc,         by_calloc,         by_realloc,
        by_reallocarray,   by_memalign,       by_aligned_alloc,
        by_posix_memalign, by_valloc,         by_pvalloc };

/* Down LEVEL frames, then one allocation through entry point WHICH.  */
__attribute__ ((noinline)) static void
descend (int level, unsigned which)
{
  if (level > 0)
    {
      descend (level - 1, which);
      KEEP (&level);
      return;
    }
  void *block = ENTRY_CALLS[which](24 + which * 8);
  if (block != NULL)
    made[which]++;
  free (block);
}

int
main (int argc, char **argv)
{
  int deepest = argc > 1 ? atoi (argv[1]) : 12;
  for (int round = 0; round < ROUNDS; round++)
    for (unsigned which = 0; which < ENTRIES; which++)
      descend ((round * 7 + (int) which) % (deepest + 1), which);
  printf ("entry_points");
  for (unsigned which = 0; which < ENTRIES; which++)
    printf (" %ld", made[which]);
  printf ("\n");
  return 0;
}
