/* C23's free_sized and free_aligned_sized: blocks from malloc, calloc,
   realloc and aligned_alloc freed through them are freed (their contexts
   hold no live allocation at exit), malloc_usable_size covers the
   request for every entry point, and with the argument "wrong" a size
   and an alignment that do not match are reported once each and the
   blocks still freed.  Built with -DWITHOUT_RUNTIME (glibc 2.36 has no
   free_sized) it is the reference: same output, same exit status.  */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef WITHOUT_RUNTIME
#define free_sized(pointer, size) free (pointer)
#define free_aligned_sized(pointer, alignment, size) free (pointer)
#else
void free_sized (void *pointer, size_t size);
void free_aligned_sized (void *pointer, size_t alignment, size_t size);
#endif

static char *volatile kept;

__attribute__ ((noipa)) static void
sized (void)
{
  for (int i = 0; i < 3; i++)
    {
      char *block = malloc (100);
      memset (block, i, 100);
      free_sized (block, 100);
    }
}

__attribute__ ((noipa)) static void
counted (void)
{
  char *block = calloc (3, 40);
  block[119] = 1;
  free_sized (block, 120);
}

__attribute__ ((noipa)) static void
aligned (void)
{
  char *block = aligned_alloc (256, 512);
  if ((uintptr_t) block % 256 != 0)
    puts ("aligned_alloc: misaligned");
  block[0] = 1;
  free_aligned_sized (block, 256, 512);
}

__attribute__ ((noipa)) static char *
start_small (void)
{
  return malloc (10);
}

__attribute__ ((noipa)) static void
grown (char *block)
{
  block = realloc (block, 300);
  block[299] = 1;
  free_sized (block, 300);
}

/* Undefined in C23; freed all the same.  Each allocates at one call site,
   twice.  */
static volatile int twice = 2;

__attribute__ ((noipa)) static void
wrong_size (void)
{
  for (int i = 0; i < twice; i++)
    free_sized (malloc (100), 99);
}

__attribute__ ((noipa)) static void
wrong_alignment (void)
{
  for (int i = 0; i < twice; i++)
    free_aligned_sized (aligned_alloc (64, 128), 4096, 128);
}

/* malloc_usable_size covers the request, whatever the entry point.  */
static int
usable_sizes (void)
{
  int wrong = 0;
  void *blocks[9];
  size_t sizes[9] = { 1, 100, 120, 300, 512, 1000, 64, 5000, 4096 };
  char *moved;

  blocks[0] = malloc (1);
  blocks[1] = malloc (100);
  blocks[2] = calloc (3, 40);
  moved = malloc (5);
  blocks[3] = realloc (moved, 300);
  blocks[4] = aligned_alloc (256, 512);
  blocks[5] = memalign (128, 1000);
  if (posix_memalign (&blocks[6], 64, 64) != 0)
    blocks[6] = NULL;
  blocks[7] = valloc (5000);
  blocks[8] = pvalloc (4000);
  for (int i = 0; i < 9; i++)
    {
      if (blocks[i] == NULL || malloc_usable_size (blocks[i]) < sizes[i])
        wrong++;
      else
        memset (blocks[i], 1, malloc_usable_size (blocks[i]));
      free (blocks[i]);
    }
  return wrong;
}

int
main (int argc, char **argv)
{
  free_sized (NULL, 0);
  free_aligned_sized (NULL, 64, 0);
  sized ();
  counted ();
  aligned ();
  grown (start_small ());
  printf ("usable sizes wrong: %d\n", usable_sizes ());
  if (argc > 1 && strcmp (argv[1], "wrong") == 0)
    {
      wrong_size ();
      wrong_alignment ();
    }
  kept = malloc (1);
  free (kept);
  puts ("sized done");
  return 3;
}
