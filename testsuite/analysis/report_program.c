/* The program test_report.py profiles for `memprof report': five
   allocation contexts, each from its own function, chosen so that every
   sort of the report's table gives a different, known order.

     context            allocs  bytes      accesses            findings
     alloc_large_arrays      2  1 MiB      ~1,024 (4 KiB each)  over-reserved
     alloc_many_nodes    5,000  80,000     ~10,000 (2 each)     short-lived
     alloc_hot_buffers      10  40,960     ~512,000             -
     alloc_never_used        3  6,000      0                    never touched
     alloc_leaked_record     1  300        ~300                 leaked

   By bytes: large, many, hot, never, leaked.  By allocations: many, hot,
   never, large, leaked.  By accesses: hot, many, large, leaked, never.
   With the argument "many", the program makes instead one context for
   each path through a binary recursion 14 calls deep: 16,384 contexts of
   different sizes and access counts, for the page's speed on a large
   profile.

   With "none", it allocates nothing: a profile with no context.

   No stdio: its buffers would be contexts of their own.  */

#include <stdlib.h>
#include <string.h>

#define LARGE_SIZE (512 * 1024)
#define LARGE_TOUCHED 4096
#define NODE_COUNT 5000
#define HOT_COUNT 10
#define HOT_SIZE 4096
#define HOT_PASSES 100
#define NEVER_COUNT 3
#define NEVER_SIZE 2000
#define LEAKED_SIZE 300

/* Keeps the compiler from proving the blocks dead.  */
volatile long sink;
char *leaked_record;

__attribute__ ((noinline)) static char *
alloc_large_arrays (void)
{
  return malloc (LARGE_SIZE);
}

__attribute__ ((noinline)) static void
use_large_arrays (void)
{
  for (int k = 0; k < 2; k++)
    {
      long *array = (long *) alloc_large_arrays ();
      for (int i = 0; i < LARGE_TOUCHED / (int) sizeof (long); i++)
        array[i] = i;
      free (array);
    }
}

__attribute__ ((noinline)) static long *
alloc_many_nodes (void)
{
  return malloc (16);
}

__attribute__ ((noinline)) static void
use_many_nodes (void)
{
  for (int i = 0; i < NODE_COUNT; i++)
    {
      long *node = alloc_many_nodes ();
      node[0] = i;
      sink = node[0];
      free (node);
    }
}

__attribute__ ((noinline)) static long *
alloc_hot_buffers (void)
{
  return malloc (HOT_SIZE);
}

__attribute__ ((noinline)) static void
use_hot_buffers (void)
{
  for (int k = 0; k < HOT_COUNT; k++)
    {
      long *buffer = alloc_hot_buffers ();
      for (int pass = 0; pass < HOT_PASSES / 2; pass++)
        for (int i = 0; i < HOT_SIZE / (int) sizeof (long); i++)
          buffer[i] += i; /* a load and a store */
      free (buffer);
    }
}

__attribute__ ((noinline)) static void *
alloc_never_used (void)
{
  return malloc (NEVER_SIZE);
}

__attribute__ ((noinline)) static void
use_never_used (void)
{
  void *blocks[NEVER_COUNT];
  for (int i = 0; i < NEVER_COUNT; i++)
    blocks[i] = alloc_never_used ();
  for (int i = 0; i < NEVER_COUNT; i++)
    free (blocks[i]);
}

__attribute__ ((noinline)) static char *
alloc_leaked_record (void)
{
  return malloc (LEAKED_SIZE);
}

__attribute__ ((noinline)) static void
use_leaked_record (void)
{
  leaked_record = alloc_leaked_record ();
  for (int i = 0; i < LEAKED_SIZE; i++)
    leaked_record[i] = (char) i;
}

#define MANY_DEPTH 14

__attribute__ ((noinline)) static void
alloc_at_leaf (unsigned path)
{
  char *block = malloc (16 + path % 1000);
  memset (block, 1, path % 16);
  free (block);
}

/* Each bit of PATH picks one of two call sites: every path is its own
   call stack.  */
__attribute__ ((noinline)) static void
descend (int depth, unsigned path, unsigned bits)
{
  if (depth == 0)
    alloc_at_leaf (path);
  else if (bits & 1)
    descend (depth - 1, path, bits >> 1);
  else
    descend (depth - 1, path, bits >> 1);
}

int
main (int argc, char **argv)
{
  if (argc > 1 && strcmp (argv[1], "none") == 0)
    return 0;
  if (argc > 1 && strcmp (argv[1], "many") == 0)
    {
      for (unsigned path = 0; path < 1u << MANY_DEPTH; path++)
        descend (MANY_DEPTH, path, path);
      return 0;
    }
  use_large_arrays ();
  use_many_nodes ();
  use_hot_buffers ();
  use_never_used ();
  use_leaked_record ();
  return 0;
}
