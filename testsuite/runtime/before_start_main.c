/* The program of before_start_lib.c, not instrumented: the block made
   here is read through the library's instrumented library_pick exactly
   READS times, the accesses its profile must count.  */
#include <stdio.h>
#include <stdlib.h>

#define READS 4

int library_pick (int *p);
extern int (*volatile library_add) (int);

__attribute__ ((noinline)) static int *
make_block (void)
{
  return malloc (64);
}

int
main (void)
{
  int *block = make_block ();
  int total = 0;
  block[0] = 3;
  for (int i = 0; i < READS; i++)
    total += library_pick (block);
  printf ("%d %d\n", library_add (1), total);
  free (block);
  return 0;
}
