/* Multi-threaded producer/consumer: two producers allocate messages, two
   consumers read and free them, through a bounded queue under a mutex.
   Argument: scale (default 1).  */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QUEUE 256

struct message
{
  long id;
  size_t length;
  char payload[];
};

static struct message *queue[QUEUE];
static size_t head, tail, filled;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;
static long per_producer;

static void *
produce (void *argument)
{
  long base = (long) argument;
  for (long i = 0; i < per_producer; i++)
    {
      size_t length = 16 + (size_t) (i * 37 % 240);
      struct message *m = malloc (sizeof *m + length);
      m->id = base + i;
      m->length = length;
      memset (m->payload, (int) (i & 0xff), length);
      pthread_mutex_lock (&lock);
      while (filled == QUEUE)
        pthread_cond_wait (&not_full, &lock);
      queue[tail] = m;
      tail = (tail + 1) % QUEUE;
      filled++;
      pthread_cond_signal (&not_empty);
      pthread_mutex_unlock (&lock);
    }
  return NULL;
}

static void *
consume (void *argument)
{
  long *sum = argument;
  for (long i = 0; i < per_producer; i++)
    {
      pthread_mutex_lock (&lock);
      while (filled == 0)
        pthread_cond_wait (&not_empty, &lock);
      struct message *m = queue[head];
      head = (head + 1) % QUEUE;
      filled--;
      pthread_cond_signal (&not_full);
      pthread_mutex_unlock (&lock);
      for (size_t j = 0; j < m->length; j += 16)
        *sum += m->payload[j];
      free (m);
    }
  return NULL;
}

int
main (int argc, char **argv)
{
  double scale = argc > 1 ? atof (argv[1]) : 1.0;
  pthread_t producers[2], consumers[2];
  long sums[2] = { 0, 0 };
  per_producer = (long) (2000000 * scale);
  for (long t = 0; t < 2; t++)
    {
      pthread_create (&producers[t], NULL, produce,
                      (void *) (t * per_producer));
      pthread_create (&consumers[t], NULL, consume, &sums[t]);
    }
  for (int t = 0; t < 2; t++)
    {
      pthread_join (producers[t], NULL);
      pthread_join (consumers[t], NULL);
    }
  printf ("producer_consumer %ld\n", sums[0] + sums[1]);
  return 0;
}
