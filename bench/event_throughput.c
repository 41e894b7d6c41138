/* The event queue's throughput (bench/modules_overhead.py): THREADS
   threads each store COUNT / THREADS times into a heap block of their
   own, one store event each when built with
   -fplugin-arg-memprof-events=store (at -O1 without vectorization, so
   that every store stays one).  Usage: event_throughput COUNT [THREADS] */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS_MAX 16
#define BLOCK_INTS 4096

static long stores_per_thread;

__attribute__ ((noinline)) static void
store_many (int *block, long count)
{
  for (long i = 0; i < count; i++)
    block[i & (BLOCK_INTS - 1)] = (int) i;
}

static void *
work (void *unused)
{
  int *block = malloc (BLOCK_INTS * sizeof (int));
  (void) unused;
  store_many (block, stores_per_thread);
  free (block);
  return NULL;
}

int
main (int argc, char **argv)
{
  pthread_t threads[THREADS_MAX];
  long count = argc > 1 ? atol (argv[1]) : 100000000;
  int thread_count = argc > 2 ? atoi (argv[2]) : 1;
  if (thread_count < 1 || thread_count > THREADS_MAX)
    {
      fprintf (stderr, "event_throughput: THREADS is 1 to %d\n", THREADS_MAX);
      return 2;
    }
  stores_per_thread = count / thread_count;
  for (int t = 0; t < thread_count; t++)
    pthread_create (&threads[t], NULL, work, NULL);
  for (int t = 0; t < thread_count; t++)
    pthread_join (threads[t], NULL);
  return 0;
}
