/* Two threads that name themselves (pthread_setname_np) and allocate
   known amounts (testsuite/peak/run.py): big-worker 4 MiB, small-worker
   1 MiB, both live at once at the peak, freed by main after the joins.  */

#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_barrier_t both_allocated;

static void *
worker (void *name)
{
  size_t bytes = strcmp (name, "big-worker") == 0 ? 4 << 20 : 1 << 20;
  pthread_setname_np (pthread_self (), name);
  void *block = malloc (bytes);
  memset (block, 1, bytes);
  pthread_barrier_wait (&both_allocated);
  return block;
}

int
main (void)
{
  pthread_t big, small;
  void *a, *b;
  pthread_barrier_init (&both_allocated, NULL, 2);
  pthread_create (&big, NULL, worker, "big-worker");
  pthread_create (&small, NULL, worker, "small-worker");
  pthread_join (big, &a);
  pthread_join (small, &b);
  free (a);
  free (b);
  puts ("done");
  return 0;
}
