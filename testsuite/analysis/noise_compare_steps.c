/* For test_noise.py: the bytes the C library's comparisons read, counted
   by the interceptors, against the same ranges counted by the program
   itself.  compared_site's block gets memcmp, strcmp and strncmp calls
   whose first difference (or NUL) sits at every position from 0 to 99,
   from start offsets of every residue modulo 8; mirror_site's block gets
   the same stores and, for each call, __memprof_range_access over the
   bytes the call must read (to the first difference or NUL, included, at
   most the limit), worked out here from where the difference was put.
   The two blocks' access counts must be equal.  */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memprof/abi.h"

#define BLOCK 4096
#define SPAN 128
#define SECOND 2048

__attribute__ ((noipa)) static char *
compared_site (void)
{
  return malloc (BLOCK);
}

__attribute__ ((noipa)) static char *
mirror_site (void)
{
  return malloc (BLOCK);
}

/* The same stores to both blocks: SPAN bytes of 'a' at OFFSET and
   SECOND + OFFSET, NUL-terminated, then MARK at POSITION of the second
   copy (a difference, or a NUL in both).  */
static void
prepare (char *block, size_t offset, size_t position, char mark)
{
  memset (block + offset, 'a', SPAN);
  memset (block + SECOND + offset, 'a', SPAN);
  block[offset + SPAN] = '\0';
  block[SECOND + offset + SPAN] = '\0';
  block[SECOND + offset + position] = mark;
  if (mark == '\0')
    block[offset + position] = '\0';
}

int
main (void)
{
  char *compared = compared_site ();
  char *mirror = mirror_site ();
  long signs = 0;

  for (size_t offset = 0; offset < 8; offset++)
    for (size_t position = 0; position < 100; position++)
      for (int kind = 0; kind < 4; kind++)
        {
          char mark = kind == 3 ? '\0' : 'b';
          size_t limit = kind == 2 ? 77 : SPAN;
          prepare (compared, offset, position, mark);
          prepare (mirror, offset, position, mark);
          const char *a = compared + offset, *b = compared + SECOND + offset;
          int result;
          if (kind == 0)
            result = memcmp (a, b, limit);
          else if (kind == 2)
            result = strncmp (a, b, limit);
          else
            result = strcmp (a, b);
          signs += result < 0 ? -1 : result > 0;
          size_t read = position + 1 < limit ? position + 1 : limit;
          __memprof_range_access (mirror + offset, read);
          __memprof_range_access (mirror + SECOND + offset, read);
        }
  printf ("%ld\n", signs);
  free (compared);
  free (mirror);
  return 0;
}
