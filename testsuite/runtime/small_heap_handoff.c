/* The small heap's hand-over of blocks between threads (small_heap=1):
   two producers make blocks of every class, two consumers check and
   free them, so that the consumers' lists overflow into the pools and
   the producers refill from them all the time; consumers exit in the
   middle of the stream and new ones take over (their lists go back to
   the pools), and the main thread forks while blocks are on their way
   (the child allocates and frees some of its own).  Every block carries
   a stamp that a block handed out twice would lose.  At the end every
   block is freed and every other thread has exited, so that stats=1's
   line on the small heap (small_heap_report) must say 0 blocks in use
   or in other threads' lists: a block a hand-over lost or duplicated
   shows there.

   Prints "handoff: ok" and the blocks handed over; exits 1 at the first
   wrong value.  */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define PRODUCERS 2
#define PER_PRODUCER 300000
#define QUEUE 512
/* A consumer exits after this many blocks and another takes over.  */
#define CONSUMER_SHIFT 50000

struct message
{
  uint64_t stamp;
  uint32_t size;
  unsigned char payload[];
};

static struct message *queue[QUEUE];
static size_t head, tail, filled;
static long remaining = (long) PRODUCERS * PER_PRODUCER;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;

static void
fail (const char *what, uint64_t at)
{
  printf ("wrong: %s at %llu\n", what, (unsigned long long) at);
  fflush (stdout);
  _exit (1);
}

static uint64_t
stamp_of (uint64_t producer, uint64_t i)
{
  return (producer << 32 | i) * 0x9e3779b97f4a7c15ULL;
}

static void *
produce (void *argument)
{
  uint64_t producer = (uintptr_t) argument;
  for (uint64_t i = 0; i < PER_PRODUCER; i++)
    {
      /* Messages of 16 to 256 bytes: every class of the small heap.  */
      uint32_t size
          = (uint32_t) (sizeof (struct message) + (i * 37 + producer) % 241);
      struct message *m = malloc (size);
      if (m == NULL)
        fail ("malloc", i);
      m->stamp = stamp_of (producer, i);
      m->size = size;
      memset (m->payload, (int) (m->stamp & 0xff),
              size - sizeof (struct message));
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

/* Take up to CONSUMER_SHIFT messages, check and free them; the number
   taken.  */
static void *
consume (void *unused)
{
  (void) unused;
  long taken = 0;
  while (taken < CONSUMER_SHIFT)
    {
      pthread_mutex_lock (&lock);
      while (filled == 0 && remaining > 0)
        pthread_cond_wait (&not_empty, &lock);
      if (remaining == 0)
        {
          pthread_mutex_unlock (&lock);
          break;
        }
      struct message *m = queue[head];
      head = (head + 1) % QUEUE;
      filled--;
      remaining--;
      if (remaining == 0)
        pthread_cond_broadcast (&not_empty);
      pthread_cond_signal (&not_full);
      pthread_mutex_unlock (&lock);
      unsigned char expected = (unsigned char) (m->stamp & 0xff);
      for (uint32_t j = 0; j < m->size - sizeof (struct message); j++)
        if (m->payload[j] != expected)
          fail ("a handed block's contents", m->stamp);
      free (m);
      taken++;
    }
  return (void *) taken;
}

/* The child of a fork made while blocks are on their way: its own
   blocks of every class, made and freed.  */
static void
child (void)
{
  static void *blocks[4096];
  for (int round = 0; round < 4; round++)
    {
      for (int i = 0; i < 4096; i++)
        {
          blocks[i] = malloc (1 + (size_t) (i % 256));
          if (blocks[i] == NULL)
            _exit (3);
          memset (blocks[i], i & 0xff, 1 + (size_t) (i % 256));
        }
      for (int i = 0; i < 4096; i++)
        {
          if (((unsigned char *) blocks[i])[i % 256] != (i & 0xff))
            _exit (4);
          free (blocks[i]);
        }
    }
  _exit (0);
}

int
main (void)
{
  pthread_t producers[PRODUCERS];
  for (uintptr_t p = 0; p < PRODUCERS; p++)
    pthread_create (&producers[p], NULL, produce, (void *) p);

  /* Two consumers at a time, each replaced when it exits; a fork after
     the first ones.  */
  long handed = 0;
  int forked = 0;
  for (;;)
    {
      pthread_t consumers[2];
      for (int c = 0; c < 2; c++)
        pthread_create (&consumers[c], NULL, consume, NULL);
      long taken = 0;
      for (int c = 0; c < 2; c++)
        {
          void *result;
          pthread_join (consumers[c], &result);
          taken += (long) result;
        }
      handed += taken;
      if (!forked)
        {
          forked = 1;
          pid_t pid = fork ();
          if (pid < 0)
            fail ("fork", 0);
          if (pid == 0)
            child ();
          int status;
          if (waitpid (pid, &status, 0) != pid || !WIFEXITED (status)
              || WEXITSTATUS (status) != 0)
            fail ("the forked child", (uint64_t) status);
        }
      pthread_mutex_lock (&lock);
      int done = remaining == 0;
      pthread_mutex_unlock (&lock);
      if (done)
        break;
    }
  for (int p = 0; p < PRODUCERS; p++)
    pthread_join (producers[p], NULL);
  if (handed != (long) PRODUCERS * PER_PRODUCER)
    fail ("blocks handed over", (uint64_t) handed);
  printf ("handoff: ok %ld\n", handed);
  return 0;
}
