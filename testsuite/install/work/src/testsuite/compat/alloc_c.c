/* C allocation sites with known counts: malloc through two helper frames,
   calloc then realloc (the calloc block is freed by realloc),
   posix_memalign, and an aligned_alloc block still live at exit.
   Expectations: frames leaf first as function:line-offset:column, where the
   offset is from the line holding the function's name.  */
/* expect: make_buffer:2:10 fill_buffers:5:22 main:2:14 count=5 accesses=15 size=1280 */
/* expect: main:3:18 count=1 accesses=7 size=400 */
/* expect: main:6:16 count=1 accesses=3 size=800 */
/* expect: main:11:7 count=1 accesses=11 size=1000 */
/* expect: main:15:16 count=1 accesses=13 size=4096 */
#include <stdio.h>
#include <stdlib.h>

#include "touch.h"

__attribute__ ((noinline)) static char *
make_buffer (size_t size)
{
  return malloc (size);
}

__attribute__ ((noinline)) static long
fill_buffers (int rounds)
{
  long sum = 0;
  for (int i = 0; i < rounds; i++)
    {
      char *buffer = make_buffer (256);
      for (int j = 0; j < 256; j++)
        buffer[j] = (char) (i + j);
      touch (buffer, 3);
      sum += buffer[i];
      free (buffer);
    }
  return sum;
}

int
main (void)
{
  long sum = fill_buffers (5);
  int *numbers = calloc (100, sizeof (int));
  touch (numbers, 7);
  numbers[99] = 1;
  int *grown = realloc (numbers, 800);
  touch (grown, 3);
  sum += grown[99];
  free (grown);
  void *aligned = NULL;
  if (posix_memalign (&aligned, 256, 1000) != 0)
    return 1;
  touch (aligned, 11);
  free (aligned);
  char *kept = aligned_alloc (128, 4096);
  touch (kept, 13);
  kept[0] = 'k';
  printf ("sum %ld kept %c\n", sum, kept[0]);
  return 7;
}
