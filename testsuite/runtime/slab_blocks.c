/* Small blocks in the runtime's slots (runtime/slab.c), built with the
   plugin:

   - every size class side by side: 300 blocks per class (64 ... 512
     bytes) from a site of its own (alloc_c0 ... alloc_c7), allocated in
     turn and written C + 2 times each, the last byte included;
   - realloc across the two layouts: moved_small's 40-byte blocks grown
     to 4000 bytes (a header block) and shrunk to 100 (a slot again), the
     contents kept;
   - another thread frees 1000 blocks that main's make_shared allocated
     and wrote twice each;
   - malloc_usable_size covers every size from 0 to 600, and is the size
     asked for up to 512;
   - calloc's slot blocks are zero even when the slot was used before.

   Prints one line per part: "ok" or what went wrong (the first also the
   median distance between class 0's neighbours).  */
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PER_CLASS 300
#define SHARED 1000
#define MOVED 200

/* A call site of its own: NAME (size) is malloc (size).  */
#define ALLOCATOR(name)                                                        \
  __attribute__ ((noinline)) static unsigned char *name (size_t size)          \
  {                                                                            \
    return malloc (size);                                                      \
  }
ALLOCATOR (alloc_c0)
ALLOCATOR (alloc_c1)
ALLOCATOR (alloc_c2)
ALLOCATOR (alloc_c3)
ALLOCATOR (alloc_c4)
ALLOCATOR (alloc_c5)
ALLOCATOR (alloc_c6)
ALLOCATOR (alloc_c7)
ALLOCATOR (make_shared)
ALLOCATOR (moved_small)

static unsigned char *(*const allocators[8]) (size_t)
    = { alloc_c0, alloc_c1, alloc_c2, alloc_c3,
        alloc_c4, alloc_c5, alloc_c6, alloc_c7 };

static unsigned char *blocks[8][PER_CLASS];
static unsigned char *shared[SHARED];

static void *
free_shared (void *unused)
{
  (void) unused;
  for (int i = 0; i < SHARED; i++)
    free (shared[i]);
  return NULL;
}

static int
compare (const void *x, const void *y)
{
  long left = *(const long *) x, right = *(const long *) y;
  return (left > right) - (left < right);
}

/* A size of class C (64 * C + 1 ... 64 * (C + 1) bytes) for block I.  */
static size_t
size_of (int c, int i)
{
  return 64 * (size_t) c + 1 + (size_t) (i * 7) % 64;
}

int
main (void)
{
  /* Every class, neighbours side by side.  */
  for (int i = 0; i < PER_CLASS; i++)
    for (int c = 0; c < 8; c++)
      if ((blocks[c][i] = allocators[c](size_of (c, i))) == NULL)
        return 1;
  for (int i = 0; i < PER_CLASS; i++)
    for (int c = 0; c < 8; c++)
      {
        volatile unsigned char *p = blocks[c][i];
        size_t size = size_of (c, i);
        for (int w = 0; w < c + 1; w++)
          p[(size_t) w * size / (size_t) (c + 2)] = (unsigned char) w;
        p[size - 1] = 9;
      }
  /* The median distance between class 0's neighbours: 64 in slots.  */
  long spacing[PER_CLASS - 1];
  for (int i = 0; i + 1 < PER_CLASS; i++)
    spacing[i] = labs ((long) (blocks[0][i + 1] - blocks[0][i]));
  qsort (spacing, PER_CLASS - 1, sizeof *spacing, compare);
  for (int i = 0; i < PER_CLASS; i++)
    for (int c = 0; c < 8; c++)
      free (blocks[c][i]);
  printf ("classes ok, spacing %ld\n", spacing[PER_CLASS / 2]);

  /* realloc from a slot to a header block and back.  */
  int moved_ok = 1;
  for (int i = 0; i < MOVED; i++)
    {
      unsigned char *p = moved_small (40);
      if (p == NULL)
        return 1;
      memset (p, i & 0xff, 40);
      p = realloc (p, 4000);
      if (p == NULL)
        return 1;
      moved_ok &= malloc_usable_size (p) >= 4000;
      memset (p + 40, 0, 4000 - 40);
      p = realloc (p, 100);
      if (p == NULL)
        return 1;
      for (int k = 0; k < 40; k++)
        moved_ok &= p[k] == (i & 0xff);
      moved_ok &= malloc_usable_size (p) == 100;
      free (p);
    }
  printf ("realloc %s\n", moved_ok ? "ok" : "LOST CONTENTS");

  /* Freed by another thread.  */
  for (int i = 0; i < SHARED; i++)
    {
      volatile unsigned char *p = shared[i] = make_shared (24);
      if (p == NULL)
        return 1;
      p[0] = 1;
      p[23] = 2;
    }
  pthread_t thread;
  if (pthread_create (&thread, NULL, free_shared, NULL) != 0
      || pthread_join (thread, NULL) != 0)
    return 1;
  printf ("thread ok\n");

  /* malloc_usable_size.  */
  int usable_ok = 1;
  for (size_t size = 0; size <= 600; size++)
    {
      unsigned char *p = malloc (size);
      if (p == NULL)
        return 1;
      size_t usable = malloc_usable_size (p);
      usable_ok &= usable >= size && (size > 512 || usable == size);
      free (p);
    }
  printf ("usable %s\n", usable_ok ? "ok" : "WRONG");

  /* calloc in a slot used before.  */
  int zero_ok = 1;
  for (int i = 0; i < 100; i++)
    {
      unsigned char *p = malloc (48);
      if (p == NULL)
        return 1;
      memset (p, 0xff, 48);
      free (p);
      p = calloc (1, 48);
      if (p == NULL)
        return 1;
      for (int k = 0; k < 48; k++)
        zero_ok &= p[k] == 0;
      free (p);
    }
  printf ("calloc %s\n", zero_ok ? "ok" : "NOT ZERO");
  return 0;
}
