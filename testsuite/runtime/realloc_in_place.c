/* realloc of sampled blocks (sample_interval above 1): blocks of a
   megabyte and more, sampled whatever the countdown (a block larger than
   the interval always ends it), are resized by realloc where glibc can
   do it in place.  make_block's block (2 MiB, mapped on its own by glibc)
   is shrunk by shrink_block to 1 MiB: glibc shrinks a mapped chunk where
   it is, so the block keeps its address; it is then grown by grow_block
   to 3 MiB, moved or not.  Each block's granules are written a known
   number of times between the calls, and every resize keeps the
   contents.  Prints "shrunk in place" or "shrunk by a copy", then "grown
   ok"; exits 1 at the first wrong value.  */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB (1024 * 1024)

static int
fail (const char *what)
{
  printf ("wrong: %s\n", what);
  exit (1);
}

/* One store into each of the first GRANULES 64-byte granules of BLOCK,
   each the byte VALUE.  */
__attribute__ ((noinline)) static void
touch (volatile unsigned char *block, size_t granules, unsigned char value)
{
  for (size_t i = 0; i < granules; i++)
    block[i * 64] = value;
}

/* Each of the first GRANULES granules of BLOCK starts with VALUE: one
   load a granule.  */
__attribute__ ((noinline)) static void
check (volatile unsigned char *block, size_t granules, unsigned char value,
       const char *what)
{
  for (size_t i = 0; i < granules; i++)
    if (block[i * 64] != value)
      fail (what);
}

__attribute__ ((noinline)) static unsigned char *
make_block (void)
{
  return malloc (2 * MIB);
}

__attribute__ ((noinline)) static unsigned char *
shrink_block (unsigned char *block)
{
  return realloc (block, 1 * MIB);
}

__attribute__ ((noinline)) static unsigned char *
grow_block (unsigned char *block)
{
  return realloc (block, 3 * MIB);
}

int
main (void)
{
  unsigned char *block = make_block ();
  if (block == NULL)
    fail ("malloc");
  touch (block, 1000, 1);
  unsigned char *shrunk = shrink_block (block);
  if (shrunk == NULL)
    fail ("realloc down");
  printf ("shrunk %s\n", shrunk == block ? "in place" : "by a copy");
  check (shrunk, 1000, 1, "realloc down kept the contents");
  touch (shrunk, 2000, 2);
  touch (shrunk, 2000, 2);
  unsigned char *grown = grow_block (shrunk);
  if (grown == NULL)
    fail ("realloc up");
  check (grown, 2000, 2, "realloc up kept the contents");
  touch (grown, 3000, 3);
  printf ("grown ok\n");
  free (grown);
  return 0;
}
