/* Sampling weights in the side file: with sample_interval, a context's
   side-file counts are weighted as its MIB's Totals.  kept_untouched
   makes 20,000 allocations of 64 bytes and keeps them all, untouched, to
   exit; touched_freed makes 20,000 of 64 bytes, writes the first byte of
   each and frees it.  So, whatever the weights drawn:
     kept_untouched  live allocations = untouched allocations = AllocCount,
                     live bytes = TotalSize, touched 0
     touched_freed   touched bytes = TotalSize, untouched 0, live 0  */
#include <stdio.h>
#include <stdlib.h>

#define COUNT 20000

char *kept[COUNT]; /* not static: the blocks stay live to exit */

__attribute__ ((noipa)) static void
kept_untouched (void)
{
  for (int i = 0; i < COUNT; i++)
    kept[i] = malloc (64);
}

__attribute__ ((noipa)) static void
write_first_byte (char *block)
{
  block[0] = 1;
}

__attribute__ ((noipa)) static void
touched_freed (void)
{
  for (int i = 0; i < COUNT; i++)
    {
      char *block = malloc (64);
      write_first_byte (block);
      free (block);
    }
}

int
main (void)
{
  kept_untouched ();
  touched_freed ();
  printf ("sampled done\n");
  return 0;
}
