/* Signal handlers that allocate while the runtime's section they
   interrupted is inside glibc's allocator (run.py's
   test_signal_reenter).

   "all" (the default): the main flow allocates what takes the runtime
   into glibc's malloc, free and realloc inside its sections with full
   profiling: blocks of 513 to 6,000 bytes (a header's chunk, glibc's
   arena beyond its per-thread cache), calloc's, blocks grown by
   realloc up to 40 KB.  It also allocates small blocks of the sizes the
   handler asks for, after a first round of them that, without the
   runtime, fills glibc's per-thread cache with those sizes; with the
   runtime they are slots and that cache stays empty.  The handler
   allocates those sizes (malloc, calloc, realloc), keeps some of its
   blocks for a later handler, frees blocks the main flow hands it and
   leaves one for the main flow to free.  Not a program that is safe
   without the runtime (glibc's arena serves some of the handler's
   calls then), nor with it when sampling leaves blocks to glibc outside
   the runtime's sections: full profiling only.

   "small": the handler only takes and frees two small blocks, what
   glibc's per-thread cache serves without the runtime.

   "sampled": the main flow's blocks are of the small heap's sizes (up
   to 248 bytes), with calloc and realloc: with sampling, the sampled
   ones are glibc's chunks with a header, allocated and freed inside the
   runtime's sections, and no other block goes to glibc.  The handler
   takes, resizes, keeps and frees blocks of other sizes than the main
   flow's (the small heap's fast paths are only as safe against a
   handler as glibc's per-thread cache: docs/internals.md).

   "single": one thread, SIGALRM from setitimer (ITIMER_REAL, every
   200 us); glibc then takes no lock, so a handler's call into its
   arena in the middle of an interrupted one corrupts it (glibc aborts:
   "malloc(): unsorted double linked list corrupted", "malloc assertion
   failure in sysmalloc").  "threads": two threads signalled in turn by
   a third (SIGUSR1, about every 50 us); the interrupted frame then
   holds the arena's lock and the handler waits for it forever.
   "quiet" as a further argument sends no signal: the first line of the
   output is the one every run must print.  SIGNAL_REENTER_ROUNDS sets
   the main flow's rounds a thread (ROUNDS by default).  */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

enum
{
  LIVE = 48,
  KEPT = 8,
  ROUNDS = 200000,
  THREADS = 2
};

static volatile sig_atomic_t handled;
static __thread void *to_handler, *from_handler;
static __thread void *kept[KEPT];
static __thread unsigned handler_round;

/* The small sizes, which both the main flow and the handler ask for.  */
static size_t
small_size (unsigned long i)
{
  return 16 + (i * 24) % 240;
}

/* The main flow's blocks that take the runtime into glibc.  */
static size_t
large_size (unsigned long i)
{
  return 513 + (i * 131) % 5500;
}

static bool small_only, sampled;

/* "sampled": the main flow's sizes (classes 1, 3, ... 15 of the small
   heap) and the handler's (2, 4, ... 14), apart.  */
static size_t
main_sampled_size (unsigned long i)
{
  return 24 + 32 * (i % 8);
}

static size_t
handler_sampled_size (unsigned long i)
{
  return 40 + 32 * (i % 7);
}

/* The sampled variant's handler: malloc, calloc, realloc and free of
   its own sizes, blocks kept for a later handler.  */
static void
handle_sampled (unsigned round)
{
  char *one = malloc (handler_sampled_size (round));
  char *two = calloc (1, handler_sampled_size (round * 5 + 1));
  if (one != NULL)
    one[0] = (char) round;
  if (two != NULL)
    two[1] = (char) round;
  one = realloc (one, handler_sampled_size (round * 3 + 2));
  if (one != NULL)
    one[0] = 1;
  unsigned slot = round % KEPT;
  free (kept[slot]);
  kept[slot] = one;
  free (two);
}

static void
handler (int signal)
{
  (void) signal;
  int saved_errno = errno;
  unsigned round = handler_round++;
  if (sampled)
    {
      handle_sampled (round);
      handled = handled + 1;
      errno = saved_errno;
      return;
    }
  if (small_only)
    {
      /* What glibc's per-thread cache serves without the runtime.  */
      char *first = malloc (small_size (round));
      char *second = malloc (small_size (round * 5 + 1));
      if (first != NULL)
        first[0] = (char) round;
      if (second != NULL)
        second[0] = (char) round;
      free (second);
      free (first);
      handled = handled + 1;
      errno = saved_errno;
      return;
    }
  char *one = malloc (small_size (round));
  char *two = calloc (1, small_size (round * 5 + 1));
  if (one != NULL)
    one[0] = (char) round;
  if (two != NULL)
    two[1] = (char) round;
  one = realloc (one, small_size (round * 3 + 2) + 8);
  if (one != NULL)
    one[0] = 1;
  /* Kept for a later handler: glibc's cache bins fill, the arena
     serves what they cannot.  */
  unsigned slot = round % KEPT;
  free (kept[slot]);
  kept[slot]
      = malloc (round % 4 == 0 ? large_size (round) : small_size (round));
  free (two);
  free (__atomic_exchange_n (&to_handler, (void *) NULL, __ATOMIC_SEQ_CST));
  free (__atomic_exchange_n (&from_handler, (void *) one, __ATOMIC_SEQ_CST));
  handled = handled + 1;
  errno = saved_errno;
}

__attribute__ ((noinline)) static void *
loop_block (size_t size)
{
  return malloc (size);
}

/* The sampled variant's main flow: only its own small sizes (the small
   heap's blocks, and with sampling the sampled ones in glibc's memory,
   inside the runtime's sections), calloc's and realloc's of them.  */
static unsigned long
reenter_sampled (unsigned long rounds)
{
  void *live[LIVE] = { 0 };
  unsigned long sum = 0;
  for (unsigned long i = 0; i < rounds; i++)
    {
      unsigned slot = (i * 7) % LIVE;
      free (live[slot]);
      live[slot] = loop_block (main_sampled_size (i));
      ((unsigned char *) live[slot])[0] = (unsigned char) i;
      sum += ((unsigned char *) live[slot])[0];
      unsigned char *zeroed = calloc (1, main_sampled_size (i * 3));
      sum += zeroed[7] + 1;
      zeroed = realloc (zeroed, main_sampled_size (i * 3 + 1));
      zeroed[0] = 2;
      sum += zeroed[0];
      free (zeroed);
    }
  for (unsigned slot = 0; slot < LIVE; slot++)
    free (live[slot]);
  return sum;
}

static unsigned long
reenter (unsigned long rounds)
{
  if (sampled)
    return reenter_sampled (rounds);
  void *live[LIVE] = { 0 };
  unsigned long sum = 0;
  /* Without the runtime, glibc's cache holds chunks of every small size
     from here on.  */
  void *primed[7 * 10];
  for (unsigned k = 0; k < 7 * 10; k++)
    primed[k] = malloc (small_size (k / 7));
  for (unsigned k = 0; k < 7 * 10; k++)
    free (primed[k]);
  for (unsigned long i = 0; i < rounds; i++)
    {
      unsigned slot = (i * 7) % LIVE;
      free (live[slot]);
      live[slot] = loop_block (large_size (i));
      ((unsigned char *) live[slot])[0] = (unsigned char) i;
      sum += ((unsigned char *) live[slot])[0];
      unsigned char *small = malloc (small_size (i));
      small[0] = (unsigned char) (i >> 3);
      sum += small[0];
      if (i % 2 == 0)
        {
          unsigned char *zeroed = calloc (1 + i % 50, 48);
          sum += zeroed[47] + 1;
          free (zeroed);
        }
      if (i % 8 == 0)
        {
          size_t size = 100;
          unsigned char *grown = malloc (size);
          grown[0] = 3;
          while (size < 40000)
            {
              size = size * 3 / 2;
              grown = realloc (grown, size);
              grown[size - 1] = 1;
            }
          sum += grown[0];
          free (grown);
        }
      if (i % 4 == 0 && !small_only)
        {
          char *given = malloc (700 + i % 300);
          given[0] = 1;
          free (__atomic_exchange_n (&to_handler, (void *) given,
                                     __ATOMIC_SEQ_CST));
        }
      free (small);
      free (
          __atomic_exchange_n (&from_handler, (void *) NULL, __ATOMIC_SEQ_CST));
    }
  for (unsigned slot = 0; slot < LIVE; slot++)
    free (live[slot]);
  return sum;
}

/* Blocks SIGNAL, then frees what the handler left.  */
static void
quiet_thread (int signal)
{
  sigset_t set;
  sigemptyset (&set);
  sigaddset (&set, signal);
  pthread_sigmask (SIG_BLOCK, &set, NULL);
  free (__atomic_exchange_n (&to_handler, (void *) NULL, __ATOMIC_SEQ_CST));
  free (__atomic_exchange_n (&from_handler, (void *) NULL, __ATOMIC_SEQ_CST));
  for (unsigned slot = 0; slot < KEPT; slot++)
    free (kept[slot]);
}

static unsigned long rounds = ROUNDS;
static unsigned long sums[THREADS];
static int finished, killer_done;

static void *
worker (void *argument)
{
  long index = (long) argument;
  sums[index] = reenter (rounds);
  quiet_thread (SIGUSR1);
  __atomic_fetch_add (&finished, 1, __ATOMIC_SEQ_CST);
  while (!__atomic_load_n (&killer_done, __ATOMIC_SEQ_CST))
    sched_yield ();
  return NULL;
}

int
main (int argc, char **argv)
{
  bool threads = argc > 1 && strcmp (argv[1], "threads") == 0;
  bool quiet = false;
  for (int i = 2; i < argc; i++)
    {
      quiet |= strcmp (argv[i], "quiet") == 0;
      small_only |= strcmp (argv[i], "small") == 0;
      sampled |= strcmp (argv[i], "sampled") == 0;
    }
  const char *asked = getenv ("SIGNAL_REENTER_ROUNDS");
  if (asked != NULL && atol (asked) > 0)
    rounds = (unsigned long) atol (asked);
  struct sigaction action;
  memset (&action, 0, sizeof action);
  action.sa_handler = handler;
  sigaction (threads ? SIGUSR1 : SIGALRM, &action, NULL);
  unsigned long sum = 0;
  if (!threads)
    {
      struct itimerval every = { { 0, 200 }, { 0, 200 } };
      if (!quiet)
        setitimer (ITIMER_REAL, &every, NULL);
      sum = reenter (rounds);
      struct itimerval off = { { 0, 0 }, { 0, 0 } };
      setitimer (ITIMER_REAL, &off, NULL);
      quiet_thread (SIGALRM);
    }
  else
    {
      pthread_t ids[THREADS];
      for (long i = 0; i < THREADS; i++)
        pthread_create (&ids[i], NULL, worker, (void *) i);
      for (unsigned long k = 0;
           __atomic_load_n (&finished, __ATOMIC_SEQ_CST) < THREADS; k++)
        {
          if (!quiet)
            pthread_kill (ids[k % THREADS], SIGUSR1);
          struct timespec pause = { 0, 50000 };
          nanosleep (&pause, NULL);
        }
      __atomic_store_n (&killer_done, 1, __ATOMIC_SEQ_CST);
      for (long i = 0; i < THREADS; i++)
        {
          pthread_join (ids[i], NULL);
          sum += sums[i];
        }
    }
  printf ("%s: %d thread(s), %lu rounds, sum %lu\n",
          threads ? "threads" : "single", threads ? THREADS : 1, rounds, sum);
  printf ("handled %s\n", handled > 0 ? "yes" : "no");
  return 0;
}
