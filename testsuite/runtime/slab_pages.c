/* Small blocks freed give their pages back: a million 48-byte blocks
   (slots of 64 bytes) are written, then all freed; the resident set is
   read from /proc/self/statm before, at the peak and after the frees.
   Then blocks of 300 bytes (another size class) are allocated: how many
   of them lie where the freed 48-byte blocks were (the empty spans went
   to the new class).  Prints the figures; run.py judges them.  */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SMALL_BLOCKS 1000000
#define LARGE_BLOCKS 100000

static long
resident_kib (void)
{
  long pages_total, pages_resident;
  FILE *statm = fopen ("/proc/self/statm", "r");
  if (statm == NULL
      || fscanf (statm, "%ld %ld", &pages_total, &pages_resident) != 2)
    {
      fprintf (stderr, "slab_pages: cannot read /proc/self/statm\n");
      exit (2);
    }
  fclose (statm);
  return pages_resident * (sysconf (_SC_PAGESIZE) / 1024);
}

int
main (void)
{
  static char *small[SMALL_BLOCKS];
  static char *large[LARGE_BLOCKS];
  uintptr_t lowest = UINTPTR_MAX, highest = 0;
  unsigned long sum = 0, inside = 0;

  long before = resident_kib ();
  for (size_t i = 0; i < SMALL_BLOCKS; i++)
    {
      small[i] = malloc (48);
      if (small[i] == NULL)
        return 1;
      memset (small[i], (int) i, 48);
      if ((uintptr_t) small[i] < lowest)
        lowest = (uintptr_t) small[i];
      if ((uintptr_t) small[i] > highest)
        highest = (uintptr_t) small[i];
    }
  long peak = resident_kib ();
  for (size_t i = 0; i < SMALL_BLOCKS; i++)
    {
      sum += (unsigned char) small[i][47];
      free (small[i]);
    }
  long after = resident_kib ();
  for (size_t i = 0; i < LARGE_BLOCKS; i++)
    {
      large[i] = malloc (300);
      if (large[i] == NULL)
        return 1;
      memset (large[i], 1, 300);
      inside
          += (uintptr_t) large[i] >= lowest && (uintptr_t) large[i] <= highest;
    }
  for (size_t i = 0; i < LARGE_BLOCKS; i++)
    free (large[i]);
  printf ("grown %ld KiB at the peak, %ld KiB after the frees; %lu of %d "
          "later blocks where the freed ones were; checksum %lu\n",
          peak - before, after - before, inside, LARGE_BLOCKS, sum);
  return 0;
}
