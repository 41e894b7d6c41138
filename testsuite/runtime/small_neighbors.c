/* Small blocks side by side: blocks of 8 to 56 bytes from two call sites,
   allocated in turn so that each one's glibc neighbours are the other
   site's, each written a known number of times (3 for alloc_a's, 5 for
   alloc_b's).  The runtime's layout puts no padding after a block's size
   (the bytes after it hold the next block's header), so exact counts here
   show that no two blocks share a counter.  Prints the median distance
   between neighbours (the glibc memory a small block costs) and whether
   malloc_usable_size covered every request.  Built with the plugin.  */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>

#define BLOCKS 1000

static unsigned char *a[BLOCKS], *b[BLOCKS];

__attribute__ ((noinline)) static unsigned char *
alloc_a (size_t size)
{
  return malloc (size);
}

__attribute__ ((noinline)) static unsigned char *
alloc_b (size_t size)
{
  return malloc (size);
}

static int
compare (const void *x, const void *y)
{
  long left = *(const long *) x, right = *(const long *) y;
  return (left > right) - (left < right);
}

int
main (void)
{
  static long distances[BLOCKS];
  int usable_ok = 1;

  for (int i = 0; i < BLOCKS; i++)
    {
      size_t size = 8 + (size_t) (i % 49);
      a[i] = alloc_a (size);
      b[i] = alloc_b (size);
      if (a[i] == NULL || b[i] == NULL)
        return 1;
      usable_ok &= malloc_usable_size (a[i]) >= size
                   && malloc_usable_size (b[i]) >= size;
      distances[i] = labs ((long) (b[i] - a[i]));
    }
  for (int i = 0; i < BLOCKS; i++)
    {
      size_t size = 8 + (size_t) (i % 49);
      volatile unsigned char *p = a[i], *q = b[i];
      p[0] = 1;
      p[size / 2] = 2;
      p[size - 1] = 3;
      q[0] = 1;
      q[1] = 2;
      q[size / 2] = 3;
      q[size - 2] = 4;
      q[size - 1] = 5;
    }
  for (int i = BLOCKS - 1; i >= 0; i--)
    {
      free (b[i]);
      free (a[i]);
    }
  qsort (distances, BLOCKS, sizeof *distances, compare);
  printf ("usable %s, spacing %ld\n", usable_ok ? "ok" : "SHORT",
          distances[BLOCKS / 2]);
  return 0;
}
