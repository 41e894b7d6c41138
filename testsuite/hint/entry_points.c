/* Every C entry point returns usable memory of the size and alignment
   asked for, in the hint's arena; calloc's is zeroed even when it reuses
   a dirty block; realloc keeps the contents; strdup and strndup copy
   exactly; and the program's plain free, realloc and malloc_usable_size
   accept every hinted block.  Run with the hint as argument.  */

#define _GNU_SOURCE
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "memprof/hint.h"

#include "check.h"

static const size_t sizes[]
    = { 0,   1,    7,    8,     15,    16,     17,      48,
        100, 1000, 4096, 14336, 16385, 100000, 4 << 20, 9 << 20 };
#define SIZES (sizeof sizes / sizeof sizes[0])

static const size_t alignments[]
    = { 1, 2, 8, 16, 32, 64, 256, 4096, 1 << 16, 2 << 20 };
#define ALIGNMENTS (sizeof alignments / sizeof alignments[0])

static unsigned char hint;
static unsigned expected_arena;

/* Fill the whole block and read it back: usable memory, not shared with
   anything live.  */
static int
usable (unsigned char *block, size_t size)
{
  for (size_t i = 0; i < size; i++)
    block[i] = (unsigned char) (i * 7 + 3);
  for (size_t i = 0; i < size; i++)
    if (block[i] != (unsigned char) (i * 7 + 3))
      return 0;
  return malloc_usable_size (block) >= size;
}

static int
all_zero (const unsigned char *block, size_t size)
{
  for (size_t i = 0; i < size; i++)
    if (block[i] != 0)
      return 0;
  return 1;
}

static void
test_malloc_calloc (void)
{
  for (size_t i = 0; i < SIZES; i++)
    {
      size_t size = sizes[i];
      unsigned char *block = __memprof_hint_malloc (size, hint);

      CHECK (block != NULL && usable (block, size)
                 && arena_of (block) == expected_arena,
             "malloc (%zu): usable, in the hint's arena (%u, expected %u)",
             size, block ? arena_of (block) : 0, expected_arena);
      free (block);

      /* A block of the same size, dirtied and freed, then calloc: jemalloc
         may hand the same memory back.  */
      block = __memprof_hint_malloc (size, hint);
      if (block != NULL)
        memset (block, 0xa5, size);
      free (block);
      block = __memprof_hint_calloc (1, size, hint);
      CHECK (block != NULL && all_zero (block, size) && usable (block, size)
                 && arena_of (block) == expected_arena,
             "calloc (1, %zu): zeroed after reuse, usable, in the hint's "
             "arena",
             size);
      free (block);
    }
  unsigned char *block = __memprof_hint_calloc (1000, 24, hint);
  CHECK (block != NULL && all_zero (block, 24000) && usable (block, 24000),
         "calloc (1000, 24): 24000 zeroed, usable bytes");
  free (block);
}

static void
test_realloc (void)
{
  /* Grow a hinted block step by step with the hinted realloc, then shrink
     it with the plain one: the contents follow.  */
  unsigned char *block = __memprof_hint_realloc (NULL, 16, hint);
  size_t size = 16;
  int kept = block != NULL && arena_of (block) == expected_arena;

  for (size_t i = 0; i < 16; i++)
    block[i] = (unsigned char) i;
  for (size_t next = 100; next <= (8u << 20) && block != NULL; next *= 3)
    {
      unsigned char *grown = __memprof_hint_realloc (block, next, hint);

      if (grown == NULL)
        {
          kept = 0;
          break;
        }
      for (size_t i = 0; i < size; i++)
        kept &= grown[i] == (unsigned char) i;
      kept &= arena_of (grown) == expected_arena;
      for (size_t i = size; i < next; i++)
        grown[i] = (unsigned char) i;
      block = grown, size = next;
    }
  CHECK (kept,
         "realloc: grown 16 -> %zu bytes, contents kept, always in "
         "the hint's arena",
         size);
  block = realloc (block, 40);
  kept = block != NULL;
  for (size_t i = 0; kept && i < 40; i++)
    kept &= block[i] == (unsigned char) i;
  CHECK (kept, "plain realloc shrinks a hinted block, contents kept");
  free (block);

  /* A plain block the hinted realloc has to move goes to the hint's
     arena.  */
  block = malloc (24);
  memset (block, 0x5a, 24);
  block = __memprof_hint_realloc (block, 200000, hint);
  CHECK (block != NULL && block[0] == 0x5a && block[23] == 0x5a
             && arena_of (block) == expected_arena,
         "realloc moves a plain block it cannot grow in place to the "
         "hint's arena");
  free (block);

  block = __memprof_hint_malloc (100, hint);
  CHECK (__memprof_hint_realloc (block, 0, hint) == NULL,
         "realloc (p, 0) frees p and returns NULL, as jemalloc's realloc");
}

static void
test_aligned (void)
{
  for (size_t a = 0; a < ALIGNMENTS; a++)
    for (size_t s = 0; s < SIZES; s += 3)
      {
        size_t alignment = alignments[a], size = sizes[s];
        unsigned char *block;
        void *result = NULL;
        int status;

        block = __memprof_hint_aligned_alloc (alignment, size, hint);
        CHECK (block != NULL && (uintptr_t) block % alignment == 0
                   && usable (block, size)
                   && arena_of (block) == expected_arena,
               "aligned_alloc (%zu, %zu): aligned, usable, in the hint's "
               "arena",
               alignment, size);
        free (block);
        block = __memprof_hint_memalign (alignment, size, hint);
        CHECK (block != NULL && (uintptr_t) block % alignment == 0
                   && usable (block, size)
                   && arena_of (block) == expected_arena,
               "memalign (%zu, %zu): aligned, usable, in the hint's arena",
               alignment, size);
        block = realloc (block, size + 1000);
        CHECK (block != NULL, "plain realloc of a memalign block");
        free (block);
        if (alignment < sizeof (void *))
          continue;
        status = __memprof_hint_posix_memalign (&result, alignment, size, hint);
        CHECK (status == 0 && (uintptr_t) result % alignment == 0
                   && usable (result, size)
                   && arena_of (result) == expected_arena,
               "posix_memalign (%zu, %zu): aligned, usable, in the hint's "
               "arena",
               alignment, size);
        free (result);
      }
}

static void
test_strings (void)
{
  static const char text[] = "hot and cold";
  char *copy = __memprof_hint_strdup (text, hint);
  long page = sysconf (_SC_PAGESIZE);
  char *pages;

  CHECK (copy != NULL && strcmp (copy, text) == 0
             && malloc_usable_size (copy) >= sizeof text
             && arena_of (copy) == expected_arena,
         "strdup copies the string into the hint's arena");
  free (copy);
  copy = __memprof_hint_strdup ("", hint);
  CHECK (copy != NULL && copy[0] == '\0', "strdup (\"\")");
  free (copy);
  copy = __memprof_hint_strndup (text, 3, hint);
  CHECK (copy != NULL && strcmp (copy, "hot") == 0
             && arena_of (copy) == expected_arena,
         "strndup (s, 3) copies 3 bytes and a NUL");
  free (copy);
  copy = __memprof_hint_strndup (text, 1000, hint);
  CHECK (copy != NULL && strcmp (copy, text) == 0,
         "strndup (s, n > strlen (s)) copies the string");
  free (copy);

  /* strndup reads no further than n: 4 bytes with no NUL just before an
     unmapped page.  */
  pages = mmap (NULL, 2 * page, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (pages != MAP_FAILED && mprotect (pages + page, page, PROT_NONE) == 0)
    {
      memcpy (pages + page - 4, "cold", 4);
      copy = __memprof_hint_strndup (pages + page - 4, 4, hint);
      CHECK (copy != NULL && strcmp (copy, "cold") == 0,
             "strndup reads at most n bytes (no NUL before a guard page)");
      free (copy);
    }
}

int
main (int argc, char **argv)
{
  void *probe;

  hint = argc > 1 ? (unsigned char) atoi (argv[1]) : MEMPROF_HINT_COLD;
  probe = __memprof_hint_malloc (1, hint);
  expected_arena = arena_of (probe);
  free (probe);
  CHECK (expected_arena != UINT_MAX && expected_arena > automatic_arenas (),
         "hint %u: its arena (%u) is none of jemalloc's automatic ones "
         "(0..%u)",
         hint, expected_arena, automatic_arenas ());
  test_malloc_calloc ();
  test_realloc ();
  test_aligned ();
  test_strings ();
  printf ("entry_points done: %d failed\n", check_failures);
  return check_failures != 0;
}
