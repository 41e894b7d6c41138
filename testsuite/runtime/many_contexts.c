/* 2^15 distinct call stacks, each allocating once: more than a sampled
   run's hash tables hold (runtime_table_entries: the depot's 2^15
   buckets, the fold memo's 3/4 of 2^14 slots, the frame facts' 2^13
   entries), so that their chains grow and the memo fills.  Each level
   of the descent calls left or right by one bit of the path; run with
   fold_recursion=0 every path is a context of its own.  Prints the
   number of allocations made.  */
#include <stdio.h>
#include <stdlib.h>

#define LEVELS 15

static void left (int level, unsigned path);
static void right (int level, unsigned path);

__attribute__ ((noinline)) static void
step (int level, unsigned path)
{
  if (level == 0)
    {
      char *volatile block = malloc (64);
      block[0] = 1;
      free (block);
    }
  else if (path & 1)
    left (level - 1, path >> 1);
  else
    right (level - 1, path >> 1);
  __asm__ volatile("" ::: "memory"); /* no tail calls: every frame stays */
}

__attribute__ ((noinline)) static void
left (int level, unsigned path)
{
  step (level, path);
  __asm__ volatile("" ::: "memory");
}

__attribute__ ((noinline)) static void
right (int level, unsigned path)
{
  step (level, path);
  __asm__ volatile("" ::: "memory");
}

int
main (void)
{
  unsigned paths = 1U << LEVELS;
  for (unsigned path = 0; path < paths; path++)
    step (LEVELS, path);
  printf ("calls %u\n", paths);
  return 0;
}
