/* A pool allocator made visible through <memprof/heap.h>: 128-byte slots
   of a static, 64-byte aligned array, never from malloc.  Built with the
   plugin, each context gets exact access counts, as malloc's blocks do:

     hot      3 blocks of 100 bytes, each written and read 10 times
              (20 accesses each, 60 in all), freed one by one
     cold     2 blocks of 50 bytes, never touched; one freed, one given
              back by memprof_heap_free_all (the pool's reset)
     kept     1 block of 40 bytes, written 4 times, live at exit
     many     20000 blocks of 64 bytes (a second heap), each written
              once, all live at once, freed in a scattered order: the
              runtime's table of live blocks grows and shrinks

   and every slot reused: the counts of one block never leak into the
   next.  Bad calls (an unknown heap, a NULL block, a block outside user
   space, a free of a block never reported) are ignored.  Prints the
   same with and without the runtime, and without it links and runs
   (the API's symbols are weak).  */
#include <memprof/heap.h>
#include <stdint.h>
#include <stdio.h>

#define SLOT_SIZE 128
#define SLOTS 16

static char slots[SLOTS][SLOT_SIZE] __attribute__ ((aligned (64)));
static int in_use[SLOTS];
static unsigned pool_heap;

__attribute__ ((noipa)) static void *
pool_alloc (size_t size)
{
  if (size > SLOT_SIZE)
    return NULL;
  for (int i = 0; i < SLOTS; i++)
    if (!in_use[i])
      {
        in_use[i] = 1;
        memprof_heap_alloc (pool_heap, slots[i], size);
        return slots[i];
      }
  return NULL;
}

__attribute__ ((noipa)) static void
pool_free (void *block)
{
  memprof_heap_free (pool_heap, block);
  in_use[((char (*)[SLOT_SIZE]) block) - slots] = 0;
}

__attribute__ ((noipa)) static void
pool_reset (void)
{
  memprof_heap_free_all (pool_heap);
  for (int i = 0; i < SLOTS; i++)
    in_use[i] = 0;
}

__attribute__ ((noipa)) static void
put (int *p, int i)
{
  p[i] = i;
}

__attribute__ ((noipa)) static int
get (int *p, int i)
{
  return p[i];
}

__attribute__ ((noipa)) static int
hot (void)
{
  int sum = 0;
  for (int round = 0; round < 3; round++)
    {
      int *block = pool_alloc (100);
      for (int i = 0; i < 10; i++)
        put (block, i);
      for (int i = 0; i < 10; i++)
        sum += get (block, i);
      pool_free (block);
    }
  return sum;
}

__attribute__ ((noipa)) static void
cold (void)
{
  void *first = pool_alloc (50);
  pool_alloc (50);
  pool_free (first);
}

#define MANY 20000
static char arena[MANY][64] __attribute__ ((aligned (64)));

__attribute__ ((noipa)) static void *
arena_alloc (unsigned heap, int index)
{
  memprof_heap_alloc (heap, arena[index], 64);
  return arena[index];
}

__attribute__ ((noipa)) static void
many (void)
{
  unsigned heap = memprof_heap_register ("arena");
  for (int i = 0; i < MANY; i++)
    put (arena_alloc (heap, i), 0);
  /* 7919 is prime to MANY: every block once.  */
  for (int i = 0; i < MANY; i++)
    memprof_heap_free (heap, arena[(i * 7919) % MANY]);
}

__attribute__ ((noipa)) static int *
kept (void)
{
  int *block = pool_alloc (40);
  for (int i = 0; i < 4; i++)
    put (block, i);
  return block;
}

int
main (void)
{
  pool_heap = memprof_heap_register ("slot pool");
  /* Ignored, never a crash.  */
  memprof_heap_alloc (pool_heap + 1000, slots[0], 8);
  memprof_heap_alloc (pool_heap, NULL, 8);
  memprof_heap_alloc (pool_heap, (void *) (UINTPTR_MAX - 64), 1000);
  memprof_heap_free (pool_heap, slots[3]);
  memprof_heap_free (0, slots[3]);
  memprof_heap_free_all (pool_heap + 7);

  int sum = hot ();
  cold ();
  pool_reset ();
  many ();
  int *live = kept ();
  printf ("pool done %d %d\n", sum, live[3]);
  return sum == 135 ? 0 : 1;
}
