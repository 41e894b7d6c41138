/* Lifetimes the runtime's clock must measure: blocks held for known
   times (by nanosleep), each from its own call site, so each is its own
   context.  Prints the times it slept, in milliseconds.  */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

char *volatile last_block;

static void
sleep_ms (long ms)
{
  struct timespec wait = { ms / 1000, (ms % 1000) * 1000000 };
  nanosleep (&wait, NULL);
}

static void
hold (char *block, long ms)
{
  block[0] = 1;
  last_block = block;
  sleep_ms (ms);
  free (block);
}

int
main (void)
{
  /* Many short-lived blocks first, so the clock runs on its TSC anchor.  */
  for (int i = 0; i < 100000; i++)
    {
      char *block = malloc (32);
      block[0] = (char) i;
      last_block = block;
      free (block);
    }
  hold (malloc (100), 30);
  hold (malloc (200), 250);
  hold (malloc (300), 120);
  printf ("30 250 120\n");
  return 0;
}
