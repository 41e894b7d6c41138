/* The peak at a realloc of a recorded block resized in its own chunk:
   make_block's 2 MiB block grown by grow_block to 3 MiB.  As for a
   realloc that copies, the new block is allocated before the old one is
   freed, so the peak is 5 MiB in 2 blocks, each context's block live at
   it; the copy of the peak is made at the old block's free, by a walk of
   the live blocks when the process has a second thread (run with
   dump_interval_s): it must still find the old block there.  Prints
   "done".  */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB (1024 * 1024)

__attribute__ ((noinline)) static char *
make_block (void)
{
  return malloc (2 * MIB);
}

__attribute__ ((noinline)) static char *
grow_block (char *block)
{
  return realloc (block, 3 * MIB);
}

int
main (void)
{
  char *block = make_block ();
  if (block == NULL)
    return 1;
  memset (block, 1, 2 * MIB);
  char *grown = grow_block (block);
  if (grown == NULL || grown[2 * MIB - 1] != 1)
    return 1;
  free (grown);
  puts ("done");
  return 0;
}
