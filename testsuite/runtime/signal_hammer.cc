/* Signal handlers that allocate and free while their thread is anywhere
   in the runtime (run.py's test_signal_hammer).  The main flow hammers
   malloc, calloc, realloc, free, new and delete; a handler does the same
   on the thread it interrupts, frees a block the main flow handed it and
   leaves one of its own for the main flow to free.

   "single": one thread, SIGALRM from setitimer (ITIMER_REAL, every
   200 us): the runtime's locks are then taken by plain stores, and a
   handler that found one taken would wait forever.  (A handler's
   allocation outside the runtime's sections takes a full unwind
   through the signal frame, tens of microseconds: three of them every
   50 us would leave the main flow no time.)  "threads": two threads run
   the loop while a third sends them SIGUSR1 in turn, one every 50 us or
   so.  Further arguments: "hooks" installs malloc and free hooks first;
   "slots" has the main flow hand the handler 56-byte blocks to free
   (the runtime's slots with full profiling: with sampling, a sampled
   one's chunk would share glibc's cache bin with the main flow's, and
   glibc's free from the handler could reach its arena), besides the
   blocks of 160 KiB it always hands (glibc maps each on its own:
   M_MMAP_THRESHOLD is fixed, and their frees take no lock of glibc's).
   "small" has the main flow take and give back bursts of 41- to 48-byte
   blocks (glibc's 64-byte chunks, which the handler never asks for) and
   the handler take and free a 40-byte one: with the runtime's small heap
   (always-on mode) both are of its 48-byte class, so that the handler
   runs inside the class's refills and drains, whose pool lock the
   interrupted frame may hold (small_heap.c).  The block the handler
   leaves is then of 24 bytes, a class the main flow only frees into:
   the handler's pop inside the main flow's pop of the same list would
   hand one block out twice, as glibc's per-thread cache would.
   The loop's blocks come from loop_block: ROUNDS of them a thread,
   their sizes a function of the round.  */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

extern "C" int __sanitizer_install_malloc_and_free_hooks (
    void (*) (const volatile void *, size_t), void (*) (const volatile void *))
    __attribute__ ((weak));

enum
{
  LIVE = 64,
  ROUNDS = 300000,
  THREADS = 2
};

static volatile sig_atomic_t handled;
static unsigned long hooked_allocations, hooked_frees;
/* Blocks of the main flow for the handler to free, and one the handler
   left for the main flow.  */
static __thread void *to_handler, *small_to_handler, *from_handler;
static bool hand_slots, small_bursts;
static __thread unsigned handler_round;

static void
on_malloc (const volatile void *, size_t)
{
  __atomic_fetch_add (&hooked_allocations, 1, __ATOMIC_RELAXED);
}

static void
on_free (const volatile void *)
{
  __atomic_fetch_add (&hooked_frees, 1, __ATOMIC_RELAXED);
}

/* What the handler asks of glibc when the runtime is not there (or
   hands the allocation to glibc): only sizes that glibc's per-thread
   cache serves and takes back, since glibc's own arenas are not safe
   from a handler either (realloc and calloc take an arena's lock, which
   the interrupted frame may hold: they stay in the main flow).  The main
   flow's sizes never share their cache bins: 24 and 16 bytes (32-byte
   chunks), 40 (48), 56 (64), and 160 (176), the chunk of a sampled
   block of these sizes with the runtime's header.  The thread's cache
   is primed with them (prime_glibc_cache).  */
static void
handler (int)
{
  int saved_errno = errno;
  unsigned round = handler_round++;
  char *small = (char *) malloc (24);
  if (small != NULL)
    small[0] = (char) round;
  int *array = new int[4];
  array[0] = small != NULL ? small[0] : 0;
  delete[] array;
  free (small);
  if (small_bursts)
    {
      char *same_class = (char *) malloc (40);
      if (same_class != NULL)
        same_class[0] = (char) round;
      free (same_class);
    }
  char *left = (char *) malloc (small_bursts ? 24 : 40);
  if (left != NULL)
    left[0] = 1;
  free (__atomic_exchange_n (&to_handler, (void *) NULL, __ATOMIC_SEQ_CST));
  free (
      __atomic_exchange_n (&small_to_handler, (void *) NULL, __ATOMIC_SEQ_CST));
  free (__atomic_exchange_n (&from_handler, (void *) left, __ATOMIC_SEQ_CST));
  handled = handled + 1;
  errno = saved_errno;
}

extern "C" void *__libc_malloc (size_t);
extern "C" void __libc_free (void *);

/* glibc's cache of this thread holds chunks of the handler's sizes.  */
static void
prime_glibc_cache (void)
{
  void *chunks[9];
  for (int i = 0; i < 9; i++)
    chunks[i] = __libc_malloc (i < 3 ? 24 : i < 6 ? 40 : 160);
  for (int i = 0; i < 9; i++)
    __libc_free (chunks[i]);
}

__attribute__ ((noinline)) static void *
loop_block (size_t size)
{
  return malloc (size);
}

__attribute__ ((noinline)) static size_t
loop_size (unsigned long i)
{
  size_t size = 72 + (i * 13) % 1500;
  /* Not in glibc's bin of 176-byte chunks (prime_glibc_cache).  */
  if (size >= 150 && size <= 170)
    size += 24;
  return size + (i % 4096 == 0 ? 100000 : 0);
}

struct item
{
  long value[12];
};

static unsigned long
hammer (void)
{
  void *live[LIVE] = { 0 };
  unsigned long sum = 0;
  prime_glibc_cache ();
  for (unsigned long i = 0; i < ROUNDS; i++)
    {
      unsigned slot = (i * 7) % LIVE;
      free (live[slot]);
      live[slot] = loop_block (loop_size (i));
      ((char *) live[slot])[0] = (char) i;
      sum += ((unsigned char *) live[slot])[0];
      if (i % 3 == 0)
        {
          char *p = (char *) calloc (4 + i % 40, 16);
          sum += p[3];
          p = (char *) realloc (p, 32 + (i * 29) % 4000);
          p[0] = 2;
          sum += p[0];
          free (p);
        }
      if (i % 5 == 0)
        {
          item *one = new item ();
          one->value[0] = (long) i;
          sum += one->value[0] & 1;
          delete one;
        }
      if (i % 64 == 0)
        {
          /* This block is freed by a handler, or by this line later.  */
          char *given = (char *) malloc (160 * 1024);
          given[0] = 1;
          free (__atomic_exchange_n (&to_handler, (void *) given,
                                     __ATOMIC_SEQ_CST));
        }
      if (small_bursts && i % 16 == 0)
        {
          /* Past a thread list's bound of the small heap (512) and back:
             refills from the pool, and a drain to it.  */
          enum
          {
            BURST = 600
          };
          static __thread void *burst[BURST];
          for (unsigned k = 0; k < BURST; k++)
            {
              burst[k] = malloc (41 + (i + k) % 8);
              ((char *) burst[k])[0] = (char) k;
            }
          for (unsigned k = 0; k < BURST; k++)
            {
              sum += ((unsigned char *) burst[k])[0] & 1;
              free (burst[k]);
            }
        }
      if (hand_slots && i % 16 == 0)
        {
          void *given = malloc (56);
          free (
              __atomic_exchange_n (&small_to_handler, given, __ATOMIC_SEQ_CST));
        }
      free (
          __atomic_exchange_n (&from_handler, (void *) NULL, __ATOMIC_SEQ_CST));
    }
  for (unsigned slot = 0; slot < LIVE; slot++)
    free (live[slot]);
  return sum;
}

/* Blocks the signal, then frees what the handler left.  */
static void
quiet_thread (int signal)
{
  sigset_t set;
  sigemptyset (&set);
  sigaddset (&set, signal);
  pthread_sigmask (SIG_BLOCK, &set, NULL);
  free (__atomic_exchange_n (&to_handler, (void *) NULL, __ATOMIC_SEQ_CST));
  free (
      __atomic_exchange_n (&small_to_handler, (void *) NULL, __ATOMIC_SEQ_CST));
  free (__atomic_exchange_n (&from_handler, (void *) NULL, __ATOMIC_SEQ_CST));
}

static unsigned long sums[THREADS];
static int finished, killer_done;

static void *
worker (void *argument)
{
  long index = (long) argument;
  sums[index] = hammer ();
  quiet_thread (SIGUSR1);
  __atomic_fetch_add (&finished, 1, __ATOMIC_SEQ_CST);
  /* The killer may still signal this thread: it exits after the killer
     stops.  */
  while (!__atomic_load_n (&killer_done, __ATOMIC_SEQ_CST))
    sched_yield ();
  return NULL;
}

int
main (int argc, char **argv)
{
  bool threads = argc > 1 && strcmp (argv[1], "threads") == 0;
  bool hooks = false;
  for (int i = 2; i < argc; i++)
    {
      hooks |= strcmp (argv[i], "hooks") == 0;
      hand_slots |= strcmp (argv[i], "slots") == 0;
      small_bursts |= strcmp (argv[i], "small") == 0;
    }
  mallopt (M_MMAP_THRESHOLD, 128 * 1024);
  if (hooks && __sanitizer_install_malloc_and_free_hooks != NULL)
    __sanitizer_install_malloc_and_free_hooks (on_malloc, on_free);
  struct sigaction action;
  memset (&action, 0, sizeof action);
  action.sa_handler = handler;
  sigaction (threads ? SIGUSR1 : SIGALRM, &action, NULL);
  unsigned long sum = 0;
  if (!threads)
    {
      prime_glibc_cache ();
      struct itimerval every = { { 0, 200 }, { 0, 200 } };
      setitimer (ITIMER_REAL, &every, NULL);
      sum = hammer ();
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
  printf ("%s: %d thread(s), %d rounds, sum %lu, handled %s\n",
          threads ? "threads" : "single", threads ? THREADS : 1, ROUNDS, sum,
          handled > 0 ? "yes" : "no");
  if (hooks && __sanitizer_install_malloc_and_free_hooks != NULL)
    {
      /* Every hook call is one of a block's: there are calls.  */
      if (hooked_allocations == 0 || hooked_frees == 0)
        printf ("hooks not called\n");
    }
  return 0;
}
