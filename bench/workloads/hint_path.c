/* The cost of a hinted allocation: PAIRS malloc+free pairs of 16 to 128
   bytes, each block kept alive while 63 others are allocated (so frees
   and allocations interleave as in a program), made by malloc (argv[1]
   "plain") or by __memprof_hint_malloc with a hot or cold hint ("hot",
   "cold").  bench/hint_path.py times it.  */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memprof/hint.h"

#define PAIRS 20000000L
#define KEPT 64

int
main (int argc, char **argv)
{
  void *kept[KEPT] = { 0 };
  int hint = -1;

  if (argc != 2)
    {
      fprintf (stderr, "usage: hint_path plain|hot|cold\n");
      return 2;
    }
  if (strcmp (argv[1], "hot") == 0)
    hint = MEMPROF_HINT_HOT;
  else if (strcmp (argv[1], "cold") == 0)
    hint = MEMPROF_HINT_COLD;
  for (long i = 0; i < PAIRS; i++)
    {
      size_t size = 16 + (size_t) (i & 7) * 16;
      void *block = hint < 0
                        ? malloc (size)
                        : __memprof_hint_malloc (size, (unsigned char) hint);
      *(volatile char *) block = 1;
      unsigned slot = (unsigned) (i * 7) & (KEPT - 1);
      free (kept[slot]);
      kept[slot] = block;
    }
  for (int slot = 0; slot < KEPT; slot++)
    free (kept[slot]);
  return 0;
}
