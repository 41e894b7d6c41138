/* What a program keeps after freeing its small blocks: COUNT blocks of
   16 to 48 bytes (small_blocks.c's sizes) are allocated and written, then
   all freed, and the resident set is printed at the peak and after the
   frees, from /proc/self/statm, in KiB: "peak KIB after KIB".  Argument:
   scale (default 1: three million blocks).  */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long
resident_kib (void)
{
  long pages_total, pages_resident;
  FILE *statm = fopen ("/proc/self/statm", "r");
  if (statm == NULL
      || fscanf (statm, "%ld %ld", &pages_total, &pages_resident) != 2)
    {
      fprintf (stderr, "free_small_blocks: cannot read /proc/self/statm\n");
      exit (2);
    }
  fclose (statm);
  return pages_resident * (sysconf (_SC_PAGESIZE) / 1024);
}

int
main (int argc, char **argv)
{
  double scale = argc > 1 ? atof (argv[1]) : 1.0;
  size_t count = (size_t) (3000000 * scale);
  unsigned char **blocks = malloc ((count ? count : 1) * sizeof *blocks);
  if (blocks == NULL)
    return 1;
  for (size_t i = 0; i < count; i++)
    {
      size_t size = 16 + i % 33;
      blocks[i] = malloc (size);
      if (blocks[i] == NULL)
        return 1;
      memset (blocks[i], (int) i, size);
    }
  long peak = resident_kib ();
  for (size_t i = 0; i < count; i++)
    free (blocks[i]);
  free (blocks);
  printf ("peak %ld after %ld\n", peak, resident_kib ());
  return 0;
}
