/* Events of several threads (testsuite/modules/run.py): THREADS threads
   each allocate a block, store STORES times into it (one store per
   iteration of one loop) and free it, so the module must see THREADS *
   STORES store events inside heap blocks, from THREADS threads and the
   main one (pthread_create allocates).  Each
   thread allocates its own block: the events of one thread arrive in
   its order, but not in order with another thread's.  */

#include <pthread.h>
#include <stdlib.h>

#define THREADS 4
#define STORES 30000

__attribute__ ((noinline)) static void
fill (int *a, int n)
{
  for (int i = 0; i < n; i++)
    a[i] = i;
}

static void *
work (void *unused)
{
  int *block = malloc (STORES * sizeof (int));
  (void) unused;
  fill (block, STORES);
  free (block);
  return NULL;
}

int
main (void)
{
  pthread_t threads[THREADS];
  for (int t = 0; t < THREADS; t++)
    pthread_create (&threads[t], NULL, work, NULL);
  for (int t = 0; t < THREADS; t++)
    pthread_join (threads[t], NULL);
  return 0;
}
