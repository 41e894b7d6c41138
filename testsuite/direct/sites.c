/* Direct allocation calls (testsuite/direct/run.py): malloc, calloc,
   realloc and free at sites of distinct block sizes, in loops, so that a
   sampled profile holds each site's first allocation and a full one holds
   every count.  Prints a checksum of what it wrote.  */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long checksum;
/* Where each block goes before it is freed: GCC may not drop the pair.  */
static void *volatile sink;
/* NULL, read at each use: the free site below sees NULL once its byte is
   set (the check then reads the site's word, not the word before NULL).  */
static void *volatile nothing;

static void
touch (unsigned char *block, size_t size)
{
  memset (block, (int) (size & 0xff), size);
  sink = block;
  checksum = checksum * 31 + block[size - 1] + size;
}

int
main (void)
{
  for (int i = 0; i < 20000; i++)
    {
      unsigned char *a = malloc (24);
      unsigned char *b = calloc (5, 40);
      unsigned char *c = realloc (NULL, 72);
      touch (a, 24);
      touch (b, 200);
      touch (c, 72);
      c = realloc (c, 3000);
      touch (c, 3000);
      free (a);
      free (b);
      free (c);
      free (nothing);
      if (i % 100 == 0)
        {
          unsigned char *d = malloc (100000);
          touch (d, 100000);
          free (d);
        }
    }
  free (NULL);
  printf ("%lu\n", checksum);
  return 7;
}
