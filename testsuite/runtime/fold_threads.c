/* Blocks of one context freed by several threads at once (the folds a
   per-thread accumulation would keep apart until a dump or the thread's
   exit: docs/benchmarks.md, "Folds of threads"), with profiles dumped while those threads are alive and parked, after
   they have exited, and while they free.  Argument: none.  Prints the
   sizes of each round for the test to check the profiles against.  */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <memprof/interface.h>

#define THREADS 4
#define PER_THREAD 6000
#define BLOCKS (THREADS * PER_THREAD)

static char *blocks[BLOCKS];
static pthread_barrier_t parked;

static __attribute__ ((noinline)) char *
make_block (size_t size)
{
  return malloc (size);
}

/* Round R's sizes: slots and glibc's blocks, each round its own.  */
static size_t
size_of (int round, long i)
{
  return 1 + (size_t) ((i * 37 + round * 101) % 700);
}

static void
allocate_round (int round)
{
  unsigned long long total = 0;
  for (long i = 0; i < BLOCKS; i++)
    {
      blocks[i] = make_block (size_of (round, i));
      blocks[i][0] = (char) i;
      total += size_of (round, i);
    }
  printf ("round %d: %d blocks, %llu bytes\n", round, BLOCKS, total);
}

static void
free_share (long thread)
{
  /* Interleaved shares: every thread frees blocks of every size.  */
  for (long i = thread; i < BLOCKS; i += THREADS)
    free (blocks[i]);
}

/* Frees its share, then waits (alive, its buffer full) until main has
   dumped.  */
static void *
free_and_park (void *argument)
{
  free_share ((long) argument);
  pthread_barrier_wait (&parked);
  pthread_barrier_wait (&parked);
  return NULL;
}

static void *
free_and_exit (void *argument)
{
  free_share ((long) argument);
  return NULL;
}

static void
run_round (void *(*body) (void *), int dumps)
{
  pthread_t threads[THREADS];
  for (long t = 0; t < THREADS; t++)
    pthread_create (&threads[t], NULL, body, (void *) t);
  for (int d = 0; d < dumps; d++)
    if (memprof_dump () != 0)
      puts ("dump failed");
  if (body == free_and_park)
    {
      pthread_barrier_wait (&parked);
      if (memprof_dump () != 0)
        puts ("dump failed");
      pthread_barrier_wait (&parked);
    }
  for (long t = 0; t < THREADS; t++)
    pthread_join (threads[t], NULL);
}

int
main (void)
{
  pthread_barrier_init (&parked, NULL, THREADS + 1);
  /* Dump 0: the threads alive, every block freed.  */
  allocate_round (0);
  run_round (free_and_park, 0);
  /* Dump 1: the threads exited.  */
  allocate_round (1);
  run_round (free_and_exit, 0);
  if (memprof_dump () != 0)
    puts ("dump failed");
  /* Dumps 2-4 while the threads free; then the exit's profile, 5.  */
  allocate_round (2);
  run_round (free_and_exit, 3);
  puts ("fold threads: ok");
  return 0;
}
