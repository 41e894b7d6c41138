/* A function returned from and called again at the same depth from
   another caller: the case where the frame address and return address of
   the frames near the allocation are the same as at the last allocation,
   and only a frame further out differs.  top_a and top_b are called in
   turn from one loop, deep in a recursion (a deep stack is captured by
   the runtime's chain of the last stack); both call middle, which calls
   near, which allocates: near's and middle's frames lie at the same
   addresses with the same contents each time, and middle's return address
   into top_a or top_b tells them apart.  Argument: the recursion depth
   (default 30).  Prints the allocations made under top_a and top_b.  */
#include <stdio.h>
#include <stdlib.h>

#include "descend.h"

#define ROUNDS 3000

static long under_a, under_b;

__attribute__ ((noinline)) static void *
near (size_t size)
{
  void *block = malloc (size);
  __asm__ volatile("" : : "r"(block) : "memory");
  return block;
}

__attribute__ ((noinline)) static void *
middle (size_t size)
{
  void *block = near (size);
  __asm__ volatile("" : : "r"(block) : "memory");
  return block;
}

__attribute__ ((noinline)) static void *
top_a (size_t size)
{
  under_a++;
  void *block = middle (size);
  __asm__ volatile("" : : "r"(block) : "memory");
  return block;
}

__attribute__ ((noinline)) static void *
top_b (size_t size)
{
  under_b += 1;
  void *block = middle (size + 8);
  __asm__ volatile("" : : "r"(block) : "memory");
  return block;
}

__attribute__ ((noinline)) static void
rounds (void)
{
  for (int i = 0; i < ROUNDS; i++)
    {
      /* Sometimes two in a row from one caller, so both orders occur.  */
      free (i % 3 == 0 ? top_a (24) : top_b (24));
      free (i % 5 == 0 ? top_b (40) : top_a (40));
    }
}

DESCEND_THEN (rounds)

int
main (int argc, char **argv)
{
  int depth = argc > 1 ? atoi (argv[1]) : 30;
  descend (depth);
  printf ("reentry %ld %ld\n", under_a, under_b);
  return 0;
}
