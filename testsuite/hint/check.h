/* What the hint test programs share: CHECK prints one `PASS: ...' or
   `FAIL: ...' line, which run.py counts; arena_of asks jemalloc which
   arena holds a block.  */

#ifndef HINT_TEST_CHECK_H
#define HINT_TEST_CHECK_H

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <jemalloc/jemalloc.h>

static int check_failures;

static void check_line (int ok, const char *format, ...)
    __attribute__ ((format (printf, 2, 3)));

static void
check_line (int ok, const char *format, ...)
{
  va_list arguments;

  fputs (ok ? "PASS: " : "FAIL: ", stdout);
  va_start (arguments, format);
  vprintf (format, arguments);
  va_end (arguments);
  putchar ('\n');
  fflush (stdout);
  if (!ok)
    check_failures++;
}

#define CHECK(condition, ...) check_line (!!(condition), __VA_ARGS__)

/* The index of the jemalloc arena that holds POINTER, UINT_MAX when
   jemalloc does not know it.  */
static inline unsigned
arena_of (const void *pointer)
{
  unsigned arena;
  size_t length = sizeof arena;

  if (mallctl ("arenas.lookup", &arena, &length, (void *) &pointer,
               sizeof pointer)
      != 0)
    return UINT_MAX;
  return arena;
}

/* Plain malloc (SIZE) COUNT times (at most PLAIN_BLOCKS_MAX): how many
   land in ARENA (all kept until the end, so no block comes back through
   a cache).  */
#define PLAIN_BLOCKS_MAX 128
static inline int
plain_in_arena (size_t size, int count, unsigned arena)
{
  void *blocks[PLAIN_BLOCKS_MAX];
  int found = 0;

  for (int i = 0; i < count && i < PLAIN_BLOCKS_MAX; i++)
    {
      blocks[i] = malloc (size);
      found += arena_of (blocks[i]) == arena;
    }
  for (int i = 0; i < count && i < PLAIN_BLOCKS_MAX; i++)
    free (blocks[i]);
  return found;
}

/* jemalloc's number of automatic arenas: their indices are below it, and
   the arena for huge allocations (oversize_threshold) is this index.  */
static inline unsigned
automatic_arenas (void)
{
  unsigned count;
  size_t length = sizeof count;

  if (mallctl ("opt.narenas", &count, &length, NULL, 0) != 0)
    return 0;
  return count;
}

static inline unsigned
arenas_now (void)
{
  unsigned count;
  size_t length = sizeof count;

  if (mallctl ("arenas.narenas", &count, &length, NULL, 0) != 0)
    return 0;
  return count;
}

#endif /* HINT_TEST_CHECK_H */
