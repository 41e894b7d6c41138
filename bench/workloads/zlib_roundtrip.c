/* Real code from Debian's gcc-12-source: GCC's copy of zlib compresses and
   decompresses a generated text of 4 MiB, round after round, and checks
   the result.  bench/run.py extracts zlib's sources and builds them with
   this driver.  Argument: scale (default 1).  */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zlib.h"

int
main (int argc, char **argv)
{
  double scale = argc > 1 ? atof (argv[1]) : 1.0;
  const size_t size = 4 << 20;
  unsigned char *text = malloc (size);
  unsigned long state = 3, checksum = 0;
  static const char *const words[]
      = { "memory ", "profile ", "heap ", "42 ", "allocation ", "GCC ", "\n" };

  for (size_t used = 0; used < size;)
    {
      state = state * 6364136223846793005UL + 1442695040888963407UL;
      const char *word = words[(state >> 33) % 7];
      size_t length = strlen (word);
      if (used + length > size)
        length = size - used;
      memcpy (text + used, word, length);
      used += length;
    }
  for (long round = 0; round < (long) (8 * scale) + 1; round++)
    {
      uLongf packed_size = compressBound (size), unpacked_size = size;
      unsigned char *packed = malloc (packed_size);
      unsigned char *unpacked = malloc (size);
      if (compress2 (packed, &packed_size, text, size, 6) != Z_OK
          || uncompress (unpacked, &unpacked_size, packed, packed_size) != Z_OK
          || unpacked_size != size || memcmp (unpacked, text, size) != 0)
        {
          fprintf (stderr, "zlib_roundtrip: round trip failed\n");
          return 1;
        }
      checksum += packed_size;
      free (packed);
      free (unpacked);
    }
  free (text);
  printf ("zlib_roundtrip %lu\n", checksum);
  return 0;
}
