/* The interceptors remember, per thread, whether the last caller of memcpy
   was instrumented code (whose copies the plugin counts) or not (whose
   copies the interceptor counts).  The main loop alternates copies from
   this instrumented program and from an uninstrumented library
   (verdict_signal_lib.c, dlopen'ed), so that entry is rewritten on every
   call; a timer keeps signalling the thread, whose handler copies
   64 bytes from instrumented code.  Each of the handler's copies must be
   counted once: 8 accesses of 8 bytes in its target's one granule, never
   16 (a half-written entry taken for the handler's caller: counted by
   the plugin and again by the interceptor) nor 0.
   Runs until 30000 signals were handled (or 30 s passed), then prints the
   number of handled signals and of wrong counts.  */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "memprof/abi.h"

extern uintptr_t __memprof_shadow_base;

typedef void copy_function (void *, const void *, size_t);

static copy_function *plain_copy;
static char *signal_to, *signal_from, *loop_to, *loop_from;
static volatile unsigned long handled, wrong;

__attribute__ ((noinline)) static void
instrumented_copy (void *to, const void *from, size_t size)
{
  memcpy (to, from, size);
}

static uint64_t
granule_count (const void *address)
{
  return *memprof_shadow_for (__memprof_shadow_base, (uintptr_t) address);
}

static void
on_signal (int signal_number)
{
  (void) signal_number;
  uint64_t before = granule_count (signal_to);
  instrumented_copy (signal_to, signal_from, 64);
  if (granule_count (signal_to) - before != 8)
    wrong++;
  handled++;
}

/* Signals from a timer of the thread's own: its interrupts come on the
   thread's CPU and the signal is taken at once, wherever the loop is,
   also where the machine is busy (signals sent from a second thread
   arrived mostly at the handler's return, and on a busy machine only a
   few hundred times a second).  */
static int
start_timer (void)
{
  struct sigevent event = { 0 };
  event.sigev_notify = SIGEV_THREAD_ID;
  event.sigev_signo = SIGUSR1;
  event._sigev_un._tid = gettid (); /* sigev_notify_thread_id */
  timer_t timer;
  if (timer_create (CLOCK_MONOTONIC, &event, &timer) != 0)
    return -1;
  struct itimerspec every = { { 0, 37000 }, { 0, 37000 } };
  return timer_settime (timer, 0, &every, NULL);
}

int
main (void)
{
  void *library = dlopen ("./libverdict_plain.so", RTLD_NOW);
  if (library == NULL)
    {
      fprintf (stderr, "%s\n", dlerror ());
      return 2;
    }
  plain_copy = (copy_function *) dlsym (library, "plain_copy");
  signal_to = aligned_alloc (64, 64);
  signal_from = aligned_alloc (64, 64);
  loop_to = malloc (64);
  loop_from = malloc (64);
  memset (signal_from, 1, 64);
  memset (loop_from, 2, 64);
  signal (SIGUSR1, on_signal);
  if (start_timer () != 0)
    {
      perror ("timer_create");
      return 2;
    }
  time_t end = time (NULL) + 30;
  while (handled < 30000 && time (NULL) < end)
    for (int round = 0; round < 10000; round++)
      {
        instrumented_copy (loop_to, loop_from, 8);
        plain_copy (loop_to, loop_from, 8);
      }
  signal (SIGUSR1, SIG_IGN);
  printf ("%lu handled, %lu wrong\n", handled, wrong);
  return 0;
}
