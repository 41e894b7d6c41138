/* An IFUNC resolver that allocates: it runs while the program is
   relocated, before thread-local storage is set up, where the runtime
   can neither start nor capture a stack (docs/internals.md, "Start-up").
   The program must run as without the runtime; the resolver's blocks
   are not recorded (one is kept, and freed and grown after start-up),
   the block made in main is: written once and read READS times, it
   counts READS + 1 accesses.  Built with IFUNC_MALLOC_LIBRARY, the
   resolver is a shared library's (ifunc_malloc_main.c is its
   program).  */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define READS 5

static char *resolver_kept;
static int resolver_length;

/* noipa: not taken for pure, each call reads.  */
__attribute__ ((noipa)) int
pick (int *p)
{
  return p[0];
}

static int
add_one (int x)
{
  return x + 1;
}

static int
add_two (int x)
{
  return x + 2;
}

static void *
resolve_add (void)
{
  char *block = malloc (48);
  char *copy;
  if (block == NULL)
    return (void *) add_two;
  memset (block, 'a', 47);
  block[47] = '\0';
  copy = strdup (block);
  resolver_length = copy != NULL ? (int) strlen (copy) : -1;
  free (block);
  resolver_kept = copy;
  return (void *) add_one;
}

int add (int) __attribute__ ((ifunc ("resolve_add")));

#ifndef IFUNC_MALLOC_LIBRARY
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
    total += pick (block);
  printf ("add %d, total %d, resolver %d %.3s\n", add (1), total,
          resolver_length, resolver_kept);
  /* The resolver's block, grown and freed after start-up.  */
  resolver_kept = realloc (resolver_kept, 4096);
  printf ("grown %.3s\n", resolver_kept);
  free (resolver_kept);
  free (block);
  return 3;
}
#else
int
library_length (void)
{
  return resolver_length;
}

/* A function, not the variable: the program's copy of it would be made
   (a copy relocation) before the resolver writes the library's.  */
char *
library_kept (void)
{
  return resolver_kept;
}
#endif
