/* A program whose heap has a known shape (testsuite/peak/run.py):

     phase 1  keep_tables: 4 blocks of 1 MiB, kept to the end
              scratch: 2 blocks of 512 KiB, freed at the end of phase 1
     phase 2  build_index: 8 blocks of 1 MiB (or argv[1] blocks)
              <- the peak: 12 MiB live (keep_tables 4 MiB + build_index
              8 MiB), then all freed
     phase 3  small_tail: 1000 blocks of 1 KiB, freed

   Each phase lasts about PHASE_MS milliseconds, and the heap rests at
   4 MiB for PHASE_MS / 6 between them (the timeline sees the plateaus:
   5 MiB, 4 MiB, 12 MiB, 4 MiB, about 5 MiB).  Nothing is printed before the
   end, so stdio's buffer is allocated after the peak.  */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MIB (1024 * 1024)
#define PHASE_MS 60

static void
pause_ms (int ms)
{
  struct timespec t = { 0, ms * 1000000L };
  nanosleep (&t, NULL);
}

static __attribute__ ((noinline)) void *
keep_tables (void)
{
  void *p = malloc (MIB);
  memset (p, 1, MIB);
  return p;
}

static __attribute__ ((noinline)) void *
scratch (void)
{
  void *p = malloc (MIB / 2);
  memset (p, 2, MIB / 2);
  return p;
}

static __attribute__ ((noinline)) void *
build_index (void)
{
  void *p = malloc (MIB);
  memset (p, 3, MIB);
  return p;
}

static __attribute__ ((noinline)) void *
small_tail (void)
{
  void *p = malloc (1024);
  memset (p, 4, 1024);
  return p;
}

int
main (int argc, char **argv)
{
  /* The index's blocks: 8, or the first argument (at most 16).  */
  int index_blocks = argc > 1 ? atoi (argv[1]) : 8;
  void *tables[4], *scratches[2], *index[16], *tail[1000];
  unsigned long sum = 0;

  if (index_blocks < 1 || index_blocks > 16)
    index_blocks = 8;
  for (int i = 0; i < 4; i++)
    tables[i] = keep_tables ();
  for (int i = 0; i < 2; i++)
    scratches[i] = scratch ();
  pause_ms (PHASE_MS);
  for (int i = 0; i < 2; i++)
    free (scratches[i]);
  pause_ms (PHASE_MS / 6); /* a plateau of 4 MiB */

  for (int i = 0; i < index_blocks; i++)
    index[i] = build_index ();
  pause_ms (PHASE_MS);
  for (int i = 0; i < index_blocks; i++)
    {
      sum += ((unsigned char *) index[i])[i];
      free (index[i]);
    }
  pause_ms (PHASE_MS / 6);

  for (int i = 0; i < 1000; i++)
    tail[i] = small_tail ();
  pause_ms (PHASE_MS);
  for (int i = 0; i < 1000; i++)
    free (tail[i]);

  for (int i = 0; i < 4; i++)
    sum += ((unsigned char *) tables[i])[0];
  printf ("sum %lu\n", sum);
  for (int i = 0; i < 4; i++)
    free (tables[i]);
  return 0;
}
