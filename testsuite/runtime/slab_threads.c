/* Slots passed between threads: each of PAIRS producers allocates small
   blocks of every size class (make_block), writes its own pattern in
   each and hands half of them to its consumer, which checks the pattern
   and frees them; the producer frees the other half.  Threads start and
   exit in waves, so their caches of free slots are given back while other
   threads still take slots.  A slot handed to two live blocks at once
   shows as a pattern overwritten.  Built with the plugin: every byte
   written is one access.  */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WAVES 4
#define PAIRS 3
#define BLOCKS 4000
#define QUEUE 256

struct queue
{
  pthread_mutex_t lock;
  pthread_cond_t changed;
  unsigned char *blocks[QUEUE];
  size_t sizes[QUEUE];
  unsigned head, count;
  int done;
};

static struct queue queues[PAIRS];
static int broken;

__attribute__ ((noinline)) static unsigned char *
make_block (size_t size, unsigned char pattern)
{
  unsigned char *block = malloc (size);
  if (block != NULL)
    memset (block, pattern, size);
  return block;
}

static int
intact (const unsigned char *block, size_t size, unsigned char pattern)
{
  for (size_t i = 0; i < size; i++)
    if (block[i] != pattern)
      return 0;
  return 1;
}

static void *
produce (void *argument)
{
  struct queue *queue = argument;
  unsigned char pattern = (unsigned char) (1 + (queue - queues));
  unsigned char *kept[BLOCKS / 2];
  size_t kept_sizes[BLOCKS / 2];
  unsigned kept_count = 0;

  for (unsigned i = 0; i < BLOCKS; i++)
    {
      size_t size = 1 + (i * 37) % 512;
      unsigned char *block = make_block (size, pattern);
      if (block == NULL)
        {
          __atomic_store_n (&broken, 1, __ATOMIC_RELAXED);
          break;
        }
      if (i % 2 == 0)
        {
          kept[kept_count] = block;
          kept_sizes[kept_count++] = size;
          continue;
        }
      pthread_mutex_lock (&queue->lock);
      while (queue->count == QUEUE)
        pthread_cond_wait (&queue->changed, &queue->lock);
      unsigned at = (queue->head + queue->count++) % QUEUE;
      queue->blocks[at] = block;
      queue->sizes[at] = size;
      pthread_cond_broadcast (&queue->changed);
      pthread_mutex_unlock (&queue->lock);
    }
  for (unsigned i = 0; i < kept_count; i++)
    {
      if (!intact (kept[i], kept_sizes[i], pattern))
        __atomic_store_n (&broken, 1, __ATOMIC_RELAXED);
      free (kept[i]);
    }
  pthread_mutex_lock (&queue->lock);
  queue->done = 1;
  pthread_cond_broadcast (&queue->changed);
  pthread_mutex_unlock (&queue->lock);
  return NULL;
}

static void *
consume (void *argument)
{
  struct queue *queue = argument;
  unsigned char pattern = (unsigned char) (1 + (queue - queues));

  pthread_mutex_lock (&queue->lock);
  for (;;)
    {
      while (queue->count == 0 && !queue->done)
        pthread_cond_wait (&queue->changed, &queue->lock);
      if (queue->count == 0)
        break;
      unsigned char *block = queue->blocks[queue->head];
      size_t size = queue->sizes[queue->head];
      queue->head = (queue->head + 1) % QUEUE;
      queue->count--;
      pthread_cond_broadcast (&queue->changed);
      pthread_mutex_unlock (&queue->lock);
      if (!intact (block, size, pattern))
        __atomic_store_n (&broken, 1, __ATOMIC_RELAXED);
      free (block);
      pthread_mutex_lock (&queue->lock);
    }
  pthread_mutex_unlock (&queue->lock);
  return NULL;
}

int
main (void)
{
  for (int wave = 0; wave < WAVES; wave++)
    {
      pthread_t producers[PAIRS], consumers[PAIRS];
      for (int p = 0; p < PAIRS; p++)
        {
          memset (&queues[p], 0, sizeof queues[p]);
          pthread_mutex_init (&queues[p].lock, NULL);
          pthread_cond_init (&queues[p].changed, NULL);
        }
      for (int p = 0; p < PAIRS; p++)
        if (pthread_create (&producers[p], NULL, produce, &queues[p]) != 0
            || pthread_create (&consumers[p], NULL, consume, &queues[p]) != 0)
          return 1;
      for (int p = 0; p < PAIRS; p++)
        {
          pthread_join (producers[p], NULL);
          pthread_join (consumers[p], NULL);
        }
    }
  printf ("slab threads: %s\n", broken ? "a block was overwritten" : "ok");
  return broken;
}
