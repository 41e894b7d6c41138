/* The same work, run short or long (argument: rounds): thresholds that fit
   the run classify its three allocation sites alike either way.

     make_table:  1 MiB written once at start-up, kept to the end: cold
     make_window: 4 KiB read over and over all run long: hot
     make_buffer: 16 KiB per round, filled, summed and freed: neither

   It prints a checksum that depends on the rounds only.  */

#include <stdio.h>
#include <stdlib.h>

#define TABLE_WORDS (1 << 17)
#define WINDOW_WORDS 512
#define BUFFER_WORDS 2048
#define SWEEPS_PER_ROUND 16

static __attribute__ ((noinline)) long *
make_table (void)
{
  return malloc (TABLE_WORDS * sizeof (long));
}

static __attribute__ ((noinline)) long *
make_window (void)
{
  return malloc (WINDOW_WORDS * sizeof (long));
}

static __attribute__ ((noinline)) long *
make_buffer (void)
{
  return malloc (BUFFER_WORDS * sizeof (long));
}

int
main (int argc, char **argv)
{
  long rounds = argc > 1 ? atol (argv[1]) : 100;
  long *table = make_table ();
  long *window = make_window ();
  if (table == NULL || window == NULL)
    return 1;
  for (long i = 0; i < TABLE_WORDS; i++)
    table[i] = i;
  for (long i = 0; i < WINDOW_WORDS; i++)
    window[i] = i & 7;
  unsigned long checksum = 0;
  for (long round = 0; round < rounds; round++)
    {
      long *buffer = make_buffer ();
      if (buffer == NULL)
        return 1;
      for (long i = 0; i < BUFFER_WORDS; i++)
        buffer[i] = i ^ round;
      for (long i = 0; i < BUFFER_WORDS; i++)
        checksum += (unsigned long) buffer[i];
      free (buffer);
      for (int sweep = 0; sweep < SWEEPS_PER_ROUND; sweep++)
        for (long i = 0; i < WINDOW_WORDS; i++)
          checksum = checksum * 31 + (unsigned long) window[i];
    }
  checksum += (unsigned long) table[rounds % TABLE_WORDS];
  printf ("%lu\n", checksum);
  free (window);
  free (table);
  return 0;
}
