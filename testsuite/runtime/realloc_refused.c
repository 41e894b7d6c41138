/* realloc of a sampled block that glibc refuses (sample_interval above
   1): make_block's block (2 MiB, sampled whatever the countdown) is
   written, then grown by grow_block to 1 GiB under an address-space
   limit (RLIMIT_AS, set here after start-up to a little more than the
   process maps) that glibc cannot meet: realloc returns NULL and the
   block is as it was.  It is written again and freed.  The profile holds
   the block once, its 2 MiB and all its accesses (1000 stores before the
   failed realloc, 1000 loads and 2 * 2000 stores after), and nothing at grow_block.  Prints
   "refused ok"; exits 1 at the first wrong value.  */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

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

/* The bytes of address space the process maps, from /proc/self/statm
   (its first field, in pages).  */
static size_t
mapped_bytes (void)
{
  FILE *statm = fopen ("/proc/self/statm", "r");
  unsigned long pages = 0;
  if (statm == NULL || fscanf (statm, "%lu", &pages) != 1)
    fail ("/proc/self/statm");
  fclose (statm);
  return pages * (size_t) sysconf (_SC_PAGESIZE);
}

__attribute__ ((noinline)) static unsigned char *
make_block (void)
{
  return malloc (2 * MIB);
}

__attribute__ ((noinline)) static unsigned char *
grow_block (unsigned char *block)
{
  return realloc (block, 1024 * MIB);
}

int
main (void)
{
  unsigned char *block = make_block ();
  if (block == NULL)
    fail ("malloc");
  touch (block, 1000, 1);

  struct rlimit before, tight;
  if (getrlimit (RLIMIT_AS, &before) != 0)
    fail ("getrlimit");
  tight = before;
  tight.rlim_cur = mapped_bytes () + 64 * MIB;
  if (setrlimit (RLIMIT_AS, &tight) != 0)
    fail ("setrlimit");
  errno = 0;
  unsigned char *grown = grow_block (block);
  int refused_errno = errno;
  if (setrlimit (RLIMIT_AS, &before) != 0)
    fail ("setrlimit back");
  if (grown != NULL)
    fail ("realloc to 1 GiB under the limit succeeded");
  if (refused_errno != ENOMEM)
    fail ("the refused realloc's errno");

  check (block, 1000, 1, "the refused realloc kept the contents");
  touch (block, 2000, 2);
  touch (block, 2000, 2);
  free (block);
  printf ("refused ok\n");
  return 0;
}
