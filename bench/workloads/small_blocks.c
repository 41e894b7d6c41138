/* Many small blocks alive at once: a pool of 16- to 48-byte records (the
   sizes of list nodes, short strings and small structs), each written and
   read, a quarter of them replaced in every round, some grown by
   realloc.  The peak heap is the pool: what a profiler adds per small
   block shows in the peak RSS.  Argument: scale (default 1: about 3
   million live blocks).  */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUNDS 6

static unsigned long long state = 0x9e3779b97f4a7c15ULL;

static unsigned
next_random (void)
{
  state ^= state >> 12;
  state ^= state << 25;
  state ^= state >> 27;
  return (unsigned) ((state * 0x2545f4914f6cdd1dULL) >> 33);
}

/* A block of 16 to 48 bytes, its bytes set from SEED.  */
static unsigned char *
new_block (size_t *size, unsigned seed)
{
  *size = 16 + next_random () % 33;
  unsigned char *block = malloc (*size);
  if (block == NULL)
    {
      fprintf (stderr, "small_blocks: out of memory\n");
      exit (1);
    }
  memset (block, (int) (seed & 0xff), *size);
  return block;
}

int
main (int argc, char **argv)
{
  double scale = argc > 1 ? atof (argv[1]) : 1.0;
  size_t count = (size_t) (3000000 * scale);
  unsigned char **blocks = malloc ((count ? count : 1) * sizeof *blocks);
  size_t *sizes = malloc ((count ? count : 1) * sizeof *sizes);
  unsigned long long sum = 0;

  if (blocks == NULL || sizes == NULL)
    return 1;
  for (size_t i = 0; i < count; i++)
    blocks[i] = new_block (&sizes[i], (unsigned) i);
  for (int round = 0; round < ROUNDS; round++)
    for (size_t i = 0; i < count; i++)
      {
        unsigned choice = next_random () % 8;
        if (choice < 2)
          {
            free (blocks[i]);
            blocks[i] = new_block (&sizes[i], (unsigned) (i + round));
          }
        else if (choice == 2 && sizes[i] < 40)
          {
            unsigned char *grown = realloc (blocks[i], sizes[i] + 8);
            if (grown == NULL)
              return 1;
            memset (grown + sizes[i], 1, 8);
            blocks[i] = grown;
            sizes[i] += 8;
          }
        sum += blocks[i][sizes[i] - 1] + blocks[i][0];
      }
  for (size_t i = 0; i < count; i++)
    free (blocks[i]);
  free (blocks);
  free (sizes);
  printf ("%zu blocks, checksum %llu\n", count, sum);
  return 0;
}
