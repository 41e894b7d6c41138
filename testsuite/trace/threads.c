/* The program testsuite/trace/run.py traces.  Every block it allocates
   asks for 20000 to 29999 bytes (a range the C library never asks for),
   so that the test can tell its calls from the library's.  It prints the
   calls it made; the output is the same traced or not.

   usage: threads MODE
     mixed  4 threads: malloc/free of their own blocks, calloc, realloc,
            reallocarray, aligned_alloc, posix_memalign, memalign, valloc,
            pvalloc, and frees of blocks another thread allocated
     many   32 threads that make 2000 calls each and exit before main
     api    pause/resume, sync (waits for a line on stdin after "synced"),
            reset
     fork   calls before and after a fork, and in the child
     wait   calls, then "ready", then waits for a line on stdin (the
            test sends the dump signal meanwhile)  */

#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef NO_MEMPROF
/* Built without the runtime, to compare outputs: modes mixed, many and
   fork only.  */
#define memprof_trace_pause() (-1)
#define memprof_trace_resume() (-1)
#define memprof_trace_sync() (-1)
#define memprof_trace_reset() (-1)
#else
#include "memprof/interface.h"
#endif

#define BASE 20000
#define THREADS 4
#define HANDED 300 /* blocks each thread hands to the next */

/* Every pointer goes here, so that no allocation can be optimized away. */
void *volatile sink;

static unsigned long counts[16];
enum
{
  MALLOC,
  CALLOC,
  REALLOC,
  FREE,
  ALIGNED,
  POSIX,
  MEMALIGN,
  VALLOC,
  PVALLOC,
  REALLOCARRAY,
  KINDS
};
static const char *const names[KINDS]
    = { "malloc",         "calloc",   "realloc", "free",    "aligned_alloc",
        "posix_memalign", "memalign", "valloc",  "pvalloc", "reallocarray" };
static pthread_mutex_t counts_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t barrier;
static void *handed[THREADS][HANDED];

static void
count (int kind, unsigned long n)
{
  pthread_mutex_lock (&counts_lock);
  counts[kind] += n;
  pthread_mutex_unlock (&counts_lock);
}

static void *
mixed_thread (void *cookie)
{
  long self = (long) cookie;
  unsigned long local[KINDS] = { 0 };
  void *p;

  for (int i = 0; i < 500; i++)
    {
      sink = p = malloc (BASE + (i * 37 + self) % 5000);
      local[MALLOC]++;
      if (i % 3 == 0)
        {
          sink = p = realloc (p, BASE + 6000 + i % 100);
          local[REALLOC]++;
        }
      free (p);
      local[FREE]++;
    }
  for (int i = 0; i < 50; i++)
    {
      sink = p = calloc (4, BASE / 4 + i);
      local[CALLOC]++;
      free (p);
      local[FREE]++;
      sink = p = aligned_alloc (256, BASE + 256 * (i % 10));
      local[ALIGNED]++;
      free (p);
      local[FREE]++;
      if (posix_memalign (&p, 128, BASE + i) == 0)
        {
          sink = p;
          local[POSIX]++;
          free (p);
          local[FREE]++;
        }
      sink = p = memalign (4096, BASE + i);
      local[MEMALIGN]++;
      free (p);
      local[FREE]++;
      sink = p = valloc (BASE + i);
      local[VALLOC]++;
      free (p);
      local[FREE]++;
      sink = p = pvalloc (BASE + i);
      local[PVALLOC]++;
      free (p);
      local[FREE]++;
      sink = p = malloc (BASE + 1);
      local[MALLOC]++;
      sink = p = reallocarray (p, 3, BASE / 3 + 1 + i);
      local[REALLOCARRAY]++;
      free (p);
      local[FREE]++;
    }
  /* Hand blocks to the next thread, which frees or reallocates them.  */
  for (int i = 0; i < HANDED; i++)
    {
      sink = handed[self][i] = malloc (BASE + 7000 + i);
      local[MALLOC]++;
    }
  pthread_barrier_wait (&barrier);
  long from = (self + THREADS - 1) % THREADS;
  for (int i = 0; i < HANDED; i++)
    {
      if (i % 4 == 0)
        {
          sink = handed[from][i] = realloc (handed[from][i], BASE + 8000 + i);
          local[REALLOC]++;
        }
      free (handed[from][i]);
      local[FREE]++;
    }
  for (int kind = 0; kind < KINDS; kind++)
    count (kind, local[kind]);
  return NULL;
}

static void *
many_thread (void *cookie)
{
  (void) cookie;
  void *blocks[16];
  for (int round = 0; round < 125; round++)
    {
      for (int i = 0; i < 8; i++)
        sink = blocks[i] = malloc (BASE + round + i);
      for (int i = 0; i < 8; i++)
        free (blocks[i]);
    }
  count (MALLOC, 1000);
  count (FREE, 1000);
  return NULL;
}

static void
run_threads (void *(*body) (void *), int n)
{
  pthread_t threads[64];
  pthread_barrier_init (&barrier, NULL, (unsigned) n);
  for (long i = 0; i < n; i++)
    pthread_create (&threads[i], NULL, body, (void *) i);
  for (int i = 0; i < n; i++)
    pthread_join (threads[i], NULL);
}

/* N mallocs of BASE + OFFSET + i bytes, freed.  */
static void
phase (int n, int offset)
{
  for (int i = 0; i < n; i++)
    {
      void *p = malloc (BASE + offset + i);
      sink = p;
      free (p);
    }
}

static void
print_counts (void)
{
  for (int kind = 0; kind < KINDS; kind++)
    printf ("%s %lu\n", names[kind], counts[kind]);
}

int
main (int argc, char **argv)
{
  const char *mode = argc > 1 ? argv[1] : "mixed";

  if (strcmp (mode, "mixed") == 0)
    run_threads (mixed_thread, THREADS);
  else if (strcmp (mode, "many") == 0)
    run_threads (many_thread, 32);
  else if (strcmp (mode, "api") == 0)
    {
      char line[16];
      phase (10, 1000); /* A: recorded */
      printf ("pause %d\n", memprof_trace_pause ());
      phase (20, 2000); /* P: not recorded */
      printf ("resume %d\n", memprof_trace_resume ());
      phase (30, 3000); /* B: recorded */
      printf ("sync %d\n", memprof_trace_sync ());
      printf ("synced\n");
      fflush (stdout);
      if (fgets (line, sizeof line, stdin) == NULL)
        return 3;
      printf ("reset %d\n", memprof_trace_reset ());
      phase (40, 4000); /* C: the only ones left in the file */
      printf ("sync %d\n", memprof_trace_sync ());
    }
  else if (strcmp (mode, "wait") == 0)
    {
      char line[16];
      phase (50, 5000);
      printf ("ready\n");
      fflush (stdout);
      if (fgets (line, sizeof line, stdin) == NULL)
        return 3;
    }
  else if (strcmp (mode, "fork") == 0)
    {
      phase (10, 1000);
      fflush (stdout);
      pid_t child = fork ();
      if (child == 0)
        {
          phase (25, 5000);
          _exit (0);
        }
      int status;
      waitpid (child, &status, 0);
      phase (30, 3000);
      printf ("child %d\n", WIFEXITED (status) ? WEXITSTATUS (status) : -1);
    }
  print_counts ();
  return 7; /* the exit status must come through unchanged */
}
