/* A SIGALRM handler (every 50 us) that allocates and frees while the
   main loop allocates and frees: the handler re-enters the runtime's
   allocation and free paths, the heap's peak bookkeeping among them,
   on the thread it interrupted (run.py's test_signal_alloc).  The main
   loop's 400,000 blocks come from loop_block.  */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static volatile sig_atomic_t handled;

static void
handler (int signal)
{
  (void) signal;
  /* glibc serves these from its per-thread cache: the size is one the
     main loop never asks for.  */
  char *p = malloc (24);
  if (p)
    p[0] = 1;
  free (p);
  handled++;
}

__attribute__ ((noinline)) static void *
loop_block (size_t size)
{
  return malloc (size);
}

int
main (void)
{
  struct sigaction action;
  memset (&action, 0, sizeof action);
  action.sa_handler = handler;
  sigaction (SIGALRM, &action, NULL);
  free (malloc (24));
  struct itimerval every = { { 0, 50 }, { 0, 50 } };
  setitimer (ITIMER_REAL, &every, NULL);
  enum
  {
    LIVE = 64,
    ROUNDS = 400000
  };
  static void *live[LIVE];
  unsigned long sum = 0;
  for (unsigned long i = 0; i < ROUNDS; i++)
    {
      unsigned slot = (i * 7) % LIVE;
      free (live[slot]);
      live[slot]
          = loop_block (64 + (i * 13) % 2000 + (i % 4096 == 0 ? 100000 : 0));
      ((char *) live[slot])[0] = (char) i;
      sum += ((unsigned char *) live[slot])[0];
    }
  struct itimerval off = { { 0, 0 }, { 0, 0 } };
  setitimer (ITIMER_REAL, &off, NULL);
  for (unsigned slot = 0; slot < LIVE; slot++)
    free (live[slot]);
  printf ("%lu rounds, sum %lu, handled %s\n", (unsigned long) ROUNDS, sum,
          handled > 0 ? "yes" : "no");
  return 0;
}
