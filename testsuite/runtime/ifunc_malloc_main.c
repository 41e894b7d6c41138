/* The program of ifunc_malloc.c built as a library (the resolver that
   allocates is the library's), not instrumented: the block made here is
   read through the library's instrumented pick exactly READS times, the
   accesses its profile must count.  */
#include <stdio.h>
#include <stdlib.h>

#define READS 4

int pick (int *p);
int add (int);
/* The program's relocation for this pointer runs the library's resolver
   (a call would be bound at its first call, after start-up; and a
   relocation in the library itself would run it before the library's own
   calls are bound, where it cannot call malloc even without the
   runtime).  */
static int (*volatile library_add) (int) = add;
int library_length (void);
char *library_kept (void);

__attribute__ ((noinline)) static int *
make_block (void)
{
  return malloc (64);
}

int
main (void)
{
  int *block = make_block ();
  char *kept = library_kept ();
  int total = 0;
  block[0] = 3;
  for (int i = 0; i < READS; i++)
    total += pick (block);
  printf ("add %d, total %d, resolver %d %.3s\n", library_add (1), total,
          library_length (), kept);
  kept = realloc (kept, 4096);
  printf ("grown %.3s\n", kept);
  free (kept);
  free (block);
  return 3;
}
