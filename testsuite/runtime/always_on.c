/* The always-on mode (the runtime alone, sample_interval): allocations
   that sampling leaves out are glibc's own blocks, the sampled ones the
   runtime's.  Every entry point is used on both kinds, and every kind
   freed, resized and measured by the other paths: malloc, calloc,
   realloc (growing and shrinking, with the contents checked), the
   aligned allocators, malloc_usable_size.  ROUNDS blocks of 64 bytes come
   from one site (alloc_small) for the count estimate.  Prints a checksum
   and the number of alloc_small calls; exits 1 at the first wrong value.  */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUNDS 200000

static int
fail (const char *what, long i)
{
  printf ("wrong: %s at %ld\n", what, i);
  exit (1);
}

__attribute__ ((noinline)) static char *
alloc_small (long i)
{
  char *block = malloc (64);
  if (block == NULL || malloc_usable_size (block) < 64)
    fail ("malloc (64)", i);
  memset (block, (int) (i & 0x7f), 64);
  return block;
}

int
main (void)
{
  static char *window[256];
  unsigned long checksum = 0;
  long small = 0;

  for (long i = 0; i < ROUNDS; i++)
    {
      unsigned slot = (unsigned) i & 255;
      if (window[slot] != NULL)
        {
          checksum += (unsigned char) window[slot][0];
          free (window[slot]);
        }
      window[slot] = alloc_small (i);
      small++;

      size_t size = 16 + (size_t) (i % 97) * 24;
      char *grown = calloc (1, size);
      if (grown == NULL || malloc_usable_size (grown) < size || grown[size - 1])
        fail ("calloc", i);
      memset (grown, 'a' + (int) (i % 26), size);
      for (size_t larger = size * 2; larger < size * 64; larger *= 4)
        {
          char *moved = realloc (grown, larger);
          if (moved == NULL || malloc_usable_size (moved) < larger)
            fail ("realloc up", i);
          for (size_t k = 0; k < size; k++)
            if (moved[k] != 'a' + (int) (i % 26))
              fail ("realloc kept the contents", i);
          grown = moved;
        }
      grown = realloc (grown, size / 2 + 1);
      if (grown == NULL || grown[size / 2] != 'a' + (int) (i % 26))
        fail ("realloc down", i);
      checksum += (unsigned char) grown[0];
      free (grown);

      if (i % 16 == 0)
        {
          void *aligned = NULL;
          size_t alignment = (size_t) 16 << (i / 16 % 6);
          if (posix_memalign (&aligned, alignment, 100) != 0
              || (size_t) aligned % alignment != 0
              || malloc_usable_size (aligned) < 100)
            fail ("posix_memalign", i);
          char *other = aligned_alloc (64, 128);
          char *third = memalign (32, 40);
          if (other == NULL || (size_t) other % 64 != 0 || third == NULL
              || (size_t) third % 32 != 0)
            fail ("aligned_alloc, memalign", i);
          free (aligned);
          free (other);
          free (third);
        }
    }
  for (unsigned slot = 0; slot < 256; slot++)
    free (window[slot]);
  printf ("%lu %ld\n", checksum, small);
  return 0;
}
