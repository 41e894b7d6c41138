/* Four threads allocate at two sites at once: the counts must be exact
   (no lost or doubled record), and every thread's blocks are freed by
   another thread at the end.  */
/* expect: worker:6:23 count=10000 accesses=30000 size=480000 */
/* expect: worker:12:25 count=1000 accesses=1000 size=100000 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "touch.h"

#define THREADS 4
#define ROUNDS 2500
#define KEPT_EVERY 10

static char *kept[THREADS][ROUNDS / KEPT_EVERY];

static void *
worker (void *argument)
{
  long index = (long) argument;
  long sum = 0;
  for (int i = 0; i < ROUNDS; i++)
    {
      char *scratch = malloc (48);
      touch (scratch, 3);
      scratch[0] = (char) i;
      sum += scratch[0];
      if (i % KEPT_EVERY == 0)
        {
          char *block = malloc (100);
          touch (block, 1);
          kept[index][i / KEPT_EVERY] = block;
        }
      free (scratch);
    }
  return (void *) sum;
}

int
main (void)
{
  pthread_t threads[THREADS];
  long total = 0;
  for (long t = 0; t < THREADS; t++)
    if (pthread_create (&threads[t], NULL, worker, (void *) t) != 0)
      return 1;
  for (int t = 0; t < THREADS; t++)
    {
      void *result;
      pthread_join (threads[t], &result);
      total += (long) result;
    }
  for (int t = 0; t < THREADS; t++)
    for (int i = 0; i < ROUNDS / KEPT_EVERY; i++)
      free (kept[(t + 1) % THREADS][i]);
  printf ("total %ld\n", total);
  return 0;
}
