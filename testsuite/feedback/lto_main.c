/* The callers of lto_alloc.c's wrapper (lto_clone.py), in another unit:
   cold blocks (kept, never touched) and hot blocks (read many times).
   With -DINDIRECT they call it through a pointer that main sets, so that
   the only target the profile shows is known at run time only.  The
   hinted build links context_check.c, which reports where the blocks
   went; the block counts and the end of main are context_test.h's.  */

#include "context_test.h"

void *new_block (size_t size);

/* With -DINLINE_CALLERS the paths are inlined into main: the link step
   then finds their calls in main's body, with inline frames.  */
#ifdef INLINE_CALLERS
#define CALLER static
#else
#define CALLER __attribute__ ((noinline)) static
#endif

#ifdef CHAIN
/* The clone chain variant: through lto_chain_record.c's new_record; the
   cold path is lto_chain_cold.c's, in a unit of its own.  */
void *new_record (size_t size);
void cold_path_in (void **blocks);
#define ALLOCATE(size) new_record (size)
#define cold_path() cold_path_in (cold_blocks)
#elif defined INDIRECT
static void *(*allocate_block) (size_t);
#define ALLOCATE(size) allocate_block (size)
#else
#define ALLOCATE(size) new_block (size)
#endif

#ifndef CHAIN
CALLER void
cold_path (void)
{
  for (int i = 0; i < BLOCKS; i++)
    cold_blocks[i] = ALLOCATE (SIZE);
}
#endif

CALLER unsigned long
hot_path (void)
{
  unsigned long sum = 0;
  for (int i = 0; i < BLOCKS; i++)
    {
      volatile unsigned char *block = ALLOCATE (SIZE);
      memset ((void *) block, i, SIZE);
      for (int round = 0; round < 200; round++)
        for (int k = 0; k < SIZE; k += 8)
          sum += block[k];
      hot_blocks[i] = (void *) block;
    }
  return sum;
}

int
main (int argc, char **argv)
{
#ifdef INDIRECT
  /* Known at run time only: the program's own allocator unless asked
     for malloc.  */
  allocate_block
      = argc > 1 && strcmp (argv[1], "malloc") == 0 ? malloc : new_block;
#else
  (void) argc;
  (void) argv;
#endif
  cold_path ();
  unsigned long sum = hot_path ();
  return finish (sum);
}
