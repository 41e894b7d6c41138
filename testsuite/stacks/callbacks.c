/* Allocations made by callbacks from code without frame pointers: qsort's
   comparator (the C library), a visitor called back by a shared library
   built with -fomit-frame-pointer (callbacks_lib.c), from the main thread
   and from threads, at several depths.  A full unwind and the fast
   unwinder must give each allocation the same call stack.  Prints a
   checksum and the number of allocations it made.  */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void library_walk (int depth, void (*visit) (int));

static long allocations;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
char *volatile last_block;

static void
count_one (void)
{
  pthread_mutex_lock (&lock);
  allocations++;
  pthread_mutex_unlock (&lock);
}

static int
compare (const void *a, const void *b)
{
  int x = *(const int *) a, y = *(const int *) b;
  char *scratch = malloc (32);
  count_one ();
  memcpy (scratch, &x, sizeof x);
  last_block = scratch;
  free (scratch);
  return (x > y) - (x < y);
}

static void
visit (int value)
{
  char *block = malloc ((size_t) value + 16);
  count_one ();
  block[0] = (char) value;
  last_block = block;
  free (block);
}

static void
sort_some (int n)
{
  int values[300];
  for (int i = 0; i < n; i++)
    values[i] = (i * 7919) % 211;
  qsort (values, (size_t) n, sizeof *values, compare);
}

static void *
thread_main (void *argument)
{
  int depth = (int) (long) argument;
  sort_some (50);
  library_walk (depth, visit);
  return NULL;
}

int
main (void)
{
  pthread_t threads[3];

  sort_some (300);
  for (int depth = 1; depth <= 4; depth++)
    library_walk (depth, visit);
  for (long i = 0; i < 3; i++)
    pthread_create (&threads[i], NULL, thread_main, (void *) (i + 2));
  for (int i = 0; i < 3; i++)
    pthread_join (threads[i], NULL);
  printf ("allocations %ld\n", allocations);
  return 0;
}
