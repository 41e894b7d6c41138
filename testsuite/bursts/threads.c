/* Two threads, each scanning a block of its own: each thread has its own
   countdown, so each block's sampled count estimates its exact count
   (2 * ROUNDS * N, a volatile load and store per element and round).  */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define N 1000
#define ROUNDS 1500

__attribute__ ((noipa)) void
scan (volatile long *a, long rounds)
{
  for (long r = 0; r < rounds; r++)
    for (long i = 0; i < N; i++)
      a[i] += r;
}

static void *
worker (void *block)
{
  scan (block, ROUNDS);
  return NULL;
}

int
main (void)
{
  pthread_t threads[2];
  long *blocks[2];
  for (int t = 0; t < 2; t++)
    {
      blocks[t] = calloc (N, sizeof (long));
      pthread_create (&threads[t], NULL, worker, blocks[t]);
    }
  for (int t = 0; t < 2; t++)
    pthread_join (threads[t], NULL);
  printf ("%ld %ld\n", blocks[0][5], blocks[1][999]);
  free (blocks[0]);
  free (blocks[1]);
  return 0;
}
