/* What the programs of context_hints.py share: the allocator's pointer
   (context_alloc.c), the block counts, and the end of main: print the
   sum, report where the blocks went (context_check.c, linked into the
   hinted builds only) and free them.  */

#ifndef CONTEXT_TEST_H
#define CONTEXT_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern void *(*allocate) (size_t);

/* Defined by context_check.c in the hinted build only.  */
void report_arenas (void **cold, int cold_count, void **hot, int hot_count)
    __attribute__ ((weak));

#define BLOCKS 512
#define SIZE 96

static void *cold_blocks[BLOCKS];
static void *hot_blocks[BLOCKS];

/* Make hot block I hot: written, then read 200 times; returns the sum
   of what was read.  */
static inline unsigned long
use_hot (int i)
{
  volatile unsigned char *block = hot_blocks[i];
  unsigned long sum = 0;

  memset ((void *) block, i, SIZE);
  for (int round = 0; round < 200; round++)
    for (int k = 0; k < SIZE; k += 8)
      sum += block[k];
  return sum;
}

static int
finish (unsigned long sum)
{
  printf ("sum %lu\n", sum);
  if (report_arenas)
    report_arenas (cold_blocks, BLOCKS, hot_blocks, BLOCKS);
  for (int i = 0; i < BLOCKS; i++)
    {
      free (hot_blocks[i]);
      free (cold_blocks[i]);
    }
  return 0;
}

#endif /* CONTEXT_TEST_H */
