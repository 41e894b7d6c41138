/* Wrong frees of slot blocks are refused: after a million 48-byte blocks
   (64-byte slots, every granule a slot's start) were freed and their
   spans taken by 300-byte blocks (320-byte slots), a free of a granule
   inside a 300-byte block (once a 64-byte slot's start), of an address
   inside a granule, and a second free of a block are each ignored: no
   block handed out afterwards overlaps a live one.  Prints what it
   found; run.py judges it, and the runtime's one line on stderr.  */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SMALL_BLOCKS 1000000
#define LARGE_BLOCKS 20000

static char *small[SMALL_BLOCKS];
static char *large[2 * LARGE_BLOCKS];

/* free (BLOCK + OFFSET), out of the compiler's sight (it warns).  */
static void
free_inside (char *block, size_t offset)
{
  char *volatile pointer = block + offset;
  free (pointer);
}

static int
by_address (const void *a, const void *b)
{
  uintptr_t x = (uintptr_t) * (char *const *) a,
            y = (uintptr_t) * (char *const *) b;
  return x < y ? -1 : x > y;
}

int
main (void)
{
  unsigned long inside = 0, damaged = 0;
  uintptr_t lowest = UINTPTR_MAX, highest = 0;

  for (size_t i = 0; i < SMALL_BLOCKS; i++)
    {
      small[i] = malloc (48);
      if (small[i] == NULL)
        return 1;
      if ((uintptr_t) small[i] < lowest)
        lowest = (uintptr_t) small[i];
      if ((uintptr_t) small[i] > highest)
        highest = (uintptr_t) small[i];
    }
  for (size_t i = 0; i < SMALL_BLOCKS; i++)
    free (small[i]);
  for (size_t i = 0; i < LARGE_BLOCKS; i++)
    {
      large[i] = malloc (300);
      if (large[i] == NULL)
        return 1;
      memset (large[i], (int) (i % 251) + 1, 300);
      inside
          += (uintptr_t) large[i] >= lowest && (uintptr_t) large[i] <= highest;
    }
  /* The wrong frees, on every other block.  */
  for (size_t i = 0; i < LARGE_BLOCKS; i += 2)
    {
      free_inside (large[i], 64);  /* a granule inside the block */
      free_inside (large[i], 128); /* another */
      free_inside (large[i], 16);  /* inside a granule */
    }
  /* A block freed twice: its slot must be handed out once.  */
  free (large[1]);
  free (large[1]);
  large[1] = NULL;
  for (size_t i = LARGE_BLOCKS; i < 2 * LARGE_BLOCKS; i++)
    {
      large[i] = malloc (300);
      if (large[i] == NULL)
        return 1;
      memset (large[i], 0xee, 300);
    }
  for (size_t i = 0; i < LARGE_BLOCKS; i++)
    if (large[i] != NULL)
      for (size_t b = 0; b < 300; b++)
        if (large[i][b] != (char) ((int) (i % 251) + 1))
          {
            damaged++;
            break;
          }
  /* Two live blocks at one address: the slot of the second free handed
     out twice.  */
  static char *sorted[2 * LARGE_BLOCKS];
  size_t live = 0;
  unsigned long twice = 0;
  for (size_t i = 0; i < 2 * LARGE_BLOCKS; i++)
    if (large[i] != NULL)
      sorted[live++] = large[i];
  qsort (sorted, live, sizeof *sorted, by_address);
  for (size_t i = 1; i < live; i++)
    twice += sorted[i] == sorted[i - 1];
  printf ("inside %s, damaged %lu, twice %lu\n",
          inside > LARGE_BLOCKS / 2 ? "yes" : "no", damaged, twice);
  for (size_t i = 0; i < 2 * LARGE_BLOCKS; i++)
    free (large[i]);
  return 0;
}
