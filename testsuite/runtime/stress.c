/* 16 threads, 1,000,000 allocation/free pairs each, over four sites: the
   profile must count exactly 4,000,000 allocations at each site.  */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 16
#define PAIRS 1000000

__attribute__ ((noipa)) static void
site_a (void)
{
  char *volatile block = malloc (16);
  block[0] = 1;
  free (block);
}

__attribute__ ((noipa)) static void
site_b (void)
{
  char *volatile block = malloc (100);
  block[0] = 1;
  free (block);
}

__attribute__ ((noipa)) static void
site_c (void)
{
  char *volatile block = malloc (1000);
  block[0] = 1;
  free (block);
}

__attribute__ ((noipa)) static void
site_d (void)
{
  char *volatile block = calloc (1, 24);
  block[0] = 1;
  free (block);
}

static void *
worker (void *unused)
{
  (void) unused;
  for (int i = 0; i < PAIRS / 4; i++)
    {
      site_a ();
      site_b ();
      site_c ();
      site_d ();
    }
  return NULL;
}

int
main (void)
{
  pthread_t threads[THREADS];
  for (int t = 0; t < THREADS; t++)
    if (pthread_create (&threads[t], NULL, worker, NULL) != 0)
      return 1;
  for (int t = 0; t < THREADS; t++)
    pthread_join (threads[t], NULL);
  printf ("stress done\n");
  return 0;
}
