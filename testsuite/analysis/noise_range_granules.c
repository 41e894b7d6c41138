/* For test_noise.py: the counters an intercepted call adds, granule by
   granule, against the 8-byte steps it must count.  memcmp, strcmp and
   strlen read a heap block at every start offset of a granule (0 to 63)
   and lengths 0 to 140 (one granule, the boundary of two, three or more):
   the calls' steps are START, START + 8, ... below the bytes read (to
   the first difference or NUL, included), each counted at the 64-byte
   granule it falls in.  The counters are read with an asm load, which
   the plugin does not instrument, before and after each call; every
   granule of the block must have gained what the steps put there.
   Prints "granules: N calls exact" and exits 0, or names the first call
   that miscounted and exits 1.  */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memprof/abi.h"

#define BLOCK 1024
#define GRANULES (BLOCK / MEMPROF_GRANULE_SIZE)
#define SECOND 512

static uint64_t
counter_at (uintptr_t address)
{
  uint64_t value;
  const uint64_t *counter = memprof_shadow_for (__memprof_shadow_base, address);
  __asm__ volatile("movq (%1), %0" : "=r"(value) : "r"(counter) : "memory");
  return value;
}

static void
snapshot (const char *block, uint64_t *counters)
{
  for (int i = 0; i < GRANULES; i++)
    counters[i] = counter_at ((uintptr_t) block + i * MEMPROF_GRANULE_SIZE);
}

/* The steps of READ bytes at FROM, added to EXPECTED by granule.  */
static void
expect_steps (const char *block, const char *from, size_t read,
              uint64_t *expected)
{
  for (size_t step = 0; step < read; step += MEMPROF_RANGE_STEP)
    expected[(from + step - block) / MEMPROF_GRANULE_SIZE]++;
}

static int (*volatile compare_memory) (const void *, const void *, size_t)
    = memcmp;
static int (*volatile compare_strings) (const char *, const char *) = strcmp;
static size_t (*volatile string_length) (const char *) = strlen;

int
main (void)
{
  /* Aligned to a granule, so that granule I of the block is its bytes
     64 I to 64 I + 63.  */
  char *block = aligned_alloc (MEMPROF_GRANULE_SIZE, BLOCK);
  uint64_t before[GRANULES], after[GRANULES], expected[GRANULES];
  long calls = 0, sink = 0;

  for (size_t offset = 0; offset < MEMPROF_GRANULE_SIZE; offset++)
    for (size_t length = 0; length <= 140; length++)
      for (int kind = 0; kind < 3; kind++)
        {
          char *a = block + offset, *b = block + SECOND + offset;
          memset (block, 'a', BLOCK);
          /* memcmp: LENGTH bytes, the last of them different (so the
             call stops at the first difference, at LENGTH - 1), or
             equal to the end when LENGTH is odd.  strcmp: a NUL at
             LENGTH in both.  strlen: a NUL at LENGTH.  */
          size_t read = length;
          if (kind == 0 && length % 2 == 0 && length > 0)
            b[length - 1] = 'b';
          if (kind != 0)
            {
              a[length] = '\0';
              b[length] = '\0';
              read = length + 1;
            }
          memset (expected, 0, sizeof expected);
          snapshot (block, before);
          if (kind == 0)
            sink += compare_memory (a, b, length);
          else if (kind == 1)
            sink += compare_strings (a, b);
          else
            sink += (long) string_length (a);
          snapshot (block, after);
          expect_steps (block, a, read, expected);
          if (kind != 2)
            expect_steps (block, b, read, expected);
          calls++;
          for (int i = 0; i < GRANULES; i++)
            if (after[i] - before[i] != expected[i])
              {
                printf ("granules: %s at offset %zu, %zu bytes: granule %d "
                        "gained %llu, expected %llu\n",
                        kind == 0   ? "memcmp"
                        : kind == 1 ? "strcmp"
                                    : "strlen",
                        offset, length, i,
                        (unsigned long long) (after[i] - before[i]),
                        (unsigned long long) expected[i]);
                return 1;
              }
        }
  free (block);
  printf ("granules: %ld calls exact (%ld)\n", calls, sink != 0);
  return 0;
}
