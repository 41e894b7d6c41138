/* Blocks held for known times, for the clock's tests (run.py): each is
   allocated in a function of its own (its allocation site in the
   profile) and freed after a known time measured here with
   CLOCK_MONOTONIC around the allocation and the free; the times are
   printed in microseconds.  "asleep": held across a sleep; "busy": held
   while the thread allocates and frees small blocks without a break;
   "sparse": twenty blocks, one a millisecond, each freed 20 ms later;
   "in_thread": held by a second thread (the helper serves both);
   "realloced" and "regrown": a block grown by realloc, before and after.  Also
   prints what a program could see of the runtime: its thread count in
   /proc/self/status and glibc's __libc_single_threaded.  Exits with 7.  */

#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/single_threaded.h>
#include <time.h>
#include <unistd.h>

static long
now_us (void)
{
  struct timespec now;
  clock_gettime (CLOCK_MONOTONIC, &now);
  return now.tv_sec * 1000000L + now.tv_nsec / 1000;
}

static void
sleep_us (long us)
{
  struct timespec pause = { us / 1000000, us % 1000000 * 1000 };
  nanosleep (&pause, NULL);
}

__attribute__ ((noinline)) static char *
churn_one (size_t size)
{
  char *block = malloc (size);
  block[0] = 1;
  return block;
}

/* Allocate and free small blocks for US microseconds, without a sleep.  */
static void
busy_allocating (long us)
{
  long end = now_us () + us;
  while (now_us () < end)
    for (int i = 0; i < 100; i++)
      free (churn_one (32 + i % 64));
}

/* One small block a millisecond for US microseconds, spinning between.  */
static void
sparse_allocating (long us)
{
  long end = now_us () + us, next = now_us ();
  while (now_us () < end)
    if (now_us () >= next)
      {
        free (churn_one (48));
        next += 1000;
      }
}

#define HELD(name, size)                                                       \
  __attribute__ ((noinline)) static char *held_##name (void)                   \
  {                                                                            \
    char *block = malloc (size);                                               \
    memset (block, 0, size);                                                   \
    return block;                                                              \
  }
HELD (asleep, 1000)
HELD (busy, 1100)
HELD (sparse, 1200)
HELD (in_thread, 1300)
HELD (realloced, 1400)

/* The block of held_realloced grown by realloc: its free and the new
   block's allocation share one clock reading (clock_hold_begin).  */
__attribute__ ((noinline)) static char *
held_regrown (char *block)
{
  char *grown = realloc (block, 2000);
  memset (grown + 1400, 0, 600);
  return grown;
}

/* "realloced": held across a sleep, then grown by realloc, the new
   block ("regrown") held across another sleep.  */
static void
realloc_hold (void)
{
  long before_allocation = now_us ();
  char *block = held_realloced ();
  long after_allocation = now_us ();
  sleep_us (30000);
  long before_realloc = now_us ();
  char *grown = held_regrown (block);
  long after_realloc = now_us ();
  sleep_us (25000);
  long before_free = now_us ();
  free (grown);
  long after_free = now_us ();
  /* A hundred reallocs back to back: a break (preemption) spends a hold,
     so on a loaded machine not every realloc shares its reading, but
     these do, all but a few.  */
  char *buffer = NULL;
  for (int i = 1; i <= 100; i++)
    {
      buffer = realloc (buffer, 16 * (size_t) i);
      buffer[0] = (char) i;
    }
  free (buffer);
  printf ("realloced %ld %ld\n", before_realloc - after_allocation,
          after_realloc - before_allocation);
  printf ("regrown %ld %ld\n", before_free - after_realloc,
          after_free - before_realloc);
}

/* Hold a block from ALLOCATE while MEANWHILE runs for US microseconds;
   print NAME, then the block's lifetime as bounded from inside (after
   the allocation to before the free) and from outside.  */
static void
hold (const char *name, char *(*allocate) (void), void (*meanwhile) (long),
      long us)
{
  long before_allocation = now_us ();
  char *block = allocate ();
  long after_allocation = now_us ();
  meanwhile (us);
  long before_free = now_us ();
  free (block);
  long after_free = now_us ();
  printf ("%s %ld %ld\n", name, before_free - after_allocation,
          after_free - before_allocation);
}

/* "sparse": one block a millisecond, each freed 20 ms later (40 of
   them); prints the shortest inner bound and the longest outer one.  */
#define RING 20
static void
sparse_ring (void)
{
  char *blocks[RING];
  long before[RING], after[RING], shortest = -1, longest = 0;
  long next = now_us ();
  for (int i = 0; i < 2 * RING; i++)
    {
      while (now_us () < next)
        ;
      next += 1000;
      int slot = i % RING;
      if (i >= RING)
        {
          long before_free = now_us ();
          free (blocks[slot]);
          long after_free = now_us ();
          if (shortest < 0 || before_free - after[slot] < shortest)
            shortest = before_free - after[slot];
          if (after_free - before[slot] > longest)
            longest = after_free - before[slot];
        }
      if (i < RING)
        {
          before[slot] = now_us ();
          blocks[slot] = held_sparse ();
          after[slot] = now_us ();
        }
      else
        free (churn_one (48));
    }
  printf ("sparse %ld %ld\n", shortest, longest);
}

static void *
thread_main (void *unused)
{
  (void) unused;
  hold ("in_thread", held_in_thread, busy_allocating, 40000);
  return NULL;
}

int
main (void)
{
  hold ("asleep", held_asleep, sleep_us, 60000);
  hold ("busy", held_busy, busy_allocating, 80000);
  sparse_ring ();
  realloc_hold ();
  char line[256];
  int threads = 0;
  FILE *status = fopen ("/proc/self/status", "r");
  while (status != NULL && fgets (line, sizeof line, status) != NULL)
    if (strncmp (line, "Threads:", 8) == 0)
      threads = atoi (line + 8);
  if (status != NULL)
    fclose (status);
  int single = __libc_single_threaded;
  pthread_t thread;
  pthread_create (&thread, NULL, thread_main, NULL);
  pthread_join (thread, NULL);
  printf ("threads %d single %d\n", threads, single);
  fflush (stdout);
  /* Idle: the helper must be gone before this sleep ends.  */
  printf ("idle %d\n", (int) getpid ());
  fflush (stdout);
  sleep_us (400000);
  printf ("done\n");
  return 7;
}
