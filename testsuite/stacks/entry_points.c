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

__attribute__ ((noinline)) static void *
by_malloc (size_t size)
{
  void *block = malloc (size);
  KEEP (block);
  return block;
}

__attribute__ ((noinline)) static void *
by_calloc (size_t size)
{
  void *block = calloc (2, size);
  KEEP (block);
  return block;
}

__attribute__ ((noinline)) static void *
by_realloc (size_t size)
{
  void *block = realloc (NULL, size);
  KEEP (block);
  return block;
}

__attribute__ ((noinline)) static void *
by_reallocarray (size_t size)
{
  void *block = reallocarray (NULL, 3, size);
  KEEP (block);
  return block;
}

__attribute__ ((noinline)) static void *
by_memalign (size_t size)
{
  void *block = memalign (64, size);
  KEEP (block);
  return block;
}

__attribute__ ((noinline)) static void *
by_aligned_alloc (size_t size)
{
  void *block = aligned_alloc (32, size);
  KEEP (block);
  return block;
}

__attribute__ ((noinline)) static void *
by_posix_memalign (size_t size)
{
  void *block = NULL;
  if (posix_memalign (&block, 128, size) != 0)
    block = NULL;
  KEEP (block);
  return block;
}

__attribute__ ((noinline)) static void *
by_valloc (size_t size)
{
  void *block = valloc (size);
  KEEP (block);
  return block;
}

__attribute__ ((noinline)) static void *
by_pvalloc (size_t size)
{
  void *block = pvalloc (size);
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
