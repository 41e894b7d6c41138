/* The interceptors remember, per thread, whether the last caller of memcpy
   was instrumented code (whose copies the plugin counts) or not (whose
   copies the interceptor counts).  The main loop alternates copies from
   this instrumented program and from an uninstrumented library
   (verdict_signal_lib.c, dlopen'ed), so that entry is rewritten on every
   call; a second thread keeps signalling the first, whose handler copies
   64 bytes from instrumented code.  Each of the handler's copies must be
   counted once: 8 accesses of 8 bytes in its target's one granule, never
   16 (a half-written entry taken for the handler's caller: counted by
   the plugin and again by the interceptor) nor 0.
   Runs until 30000 signals were handled (or 30 s passed), then prints the
   number of handled signals and of wrong counts.  */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "memprof/abi.h"

extern uintptr_t __memprof_shadow_base;

typedef void copy_function (void *, const void *, size_t);

static copy_function *plain_copy;
static char *signal_to, *signal_from, *loop_to, *loop_from;
static volatile unsigned long handled, wrong;
static volatile int done;
static pthread_t first_thread;

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

static void *
signaller (void *unused)
{
  (void) unused;
  while (!done)
    {
      pthread_kill (first_thread, SIGUSR1);
      for (volatile int pause = 0; pause < 200; pause++)
        ;
    }
  return NULL;
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
  first_thread = pthread_self ();
  signal (SIGUSR1, on_signal);
  pthread_t thread;
  pthread_create (&thread, NULL, signaller, NULL);
  time_t end = time (NULL) + 30;
  while (handled < 30000 && time (NULL) < end)
    for (int round = 0; round < 10000; round++)
      {
        instrumented_copy (loop_to, loop_from, 8);
        plain_copy (loop_to, loop_from, 8);
      }
  done = 1;
  pthread_join (thread, NULL);
  signal (SIGUSR1, SIG_IGN);
  printf ("%lu handled, %lu wrong\n", handled, wrong);
  return 0;
}
