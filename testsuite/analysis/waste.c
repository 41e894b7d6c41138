/* Allocation sites with known waste, for the memprof command's tests.
   The argument (default 1) multiplies every count, so that two runs with
   different arguments differ by known amounts.  Built with the plugin, so
   every access below is counted.  */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sinks the compiler cannot see through, so that no access is removed.  */
volatile unsigned long sink;

__attribute__ ((noinline)) static void
never_touched (void)
{
  char *block = malloc (8192);
  sink += (unsigned long) block != 0;
  free (block);
}

/* Reserved 64 KiB, used 1 KiB: the over-reserved site.  */
__attribute__ ((noinline)) static void
over_reserved (void)
{
  char *block = malloc (65536);
  for (int i = 0; i < 1024; i++)
    block[i] = (char) i;
  for (int i = 0; i < 1024; i += 64)
    sink += block[i];
  free (block);
}

/* Many small blocks, each freed at once.  */
__attribute__ ((noinline)) static void
short_lived (void)
{
  char *block = malloc (32);
  memset (block, 1, 32);
  sink += block[5];
  free (block);
}

__attribute__ ((noinline)) static char *
leaked (void)
{
  char *block = malloc (300);
  block[0] = 1;
  return block;
}

/* A small table read many times: dense, not wasted.  */
__attribute__ ((noinline)) static void
hot (void)
{
  long *table = malloc (64 * sizeof *table);
  for (int i = 0; i < 64; i++)
    table[i] = i;
  for (int round = 0; round < 100; round++)
    for (int i = 0; i < 64; i++)
      sink += table[i];
  free (table);
}

#ifdef EXTRA_SITE
/* Only in the second build of the diff test.  */
__attribute__ ((noinline)) static void
extra_site (void)
{
  char *block = malloc (777);
  block[0] = 1;
  sink += block[0];
  free (block);
}
#endif

int
main (int argc, char **argv)
{
  int scale = argc > 1 ? atoi (argv[1]) : 1;
  for (int i = 0; i < scale; i++)
    never_touched ();
  for (int i = 0; i < 4 * scale; i++)
    over_reserved ();
  for (int i = 0; i < 5000 * scale; i++)
    short_lived ();
  for (int i = 0; i < 3 * scale; i++)
    sink += (unsigned long) leaked ();
  for (int i = 0; i < 2 * scale; i++)
    hot ();
#ifdef EXTRA_SITE
  extra_site ();
#endif
  printf ("waste %d\n", scale);
  return 0;
}
