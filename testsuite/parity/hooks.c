/* Malloc and free hooks.  Installed with
   __sanitizer_install_malloc_and_free_hooks (and, built with
   -DNAMED_HOOKS, also defined as __sanitizer_malloc_hook and
   __sanitizer_free_hook); each allocation and free of the program must
   reach them exactly once, with its pointer and size, realloc being one
   of each; an allocation made inside a hook is not shown to the hooks
   again.  Prints what the hooks saw.  */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sanitizer/allocator_interface.h>

void free_sized (void *pointer, size_t size);

/* volatile: GCC takes malloc and free to leave the program's variables
   alone, and would otherwise read these across the calls.  */
static volatile size_t mallocs, frees, bytes, mismatches;
static const volatile void *volatile last_allocated;
static volatile size_t last_size;

static void
on_malloc (const volatile void *pointer, size_t size)
{
  mallocs++;
  bytes += size;
  last_allocated = pointer;
  last_size = size;
  if (size == 12345)
    {
      /* A hook that allocates: no recursion, not counted.  */
      char *volatile inner = malloc (1);
      free (inner);
    }
}

static void
nop_malloc (const volatile void *pointer, size_t size)
{
  (void) pointer;
  (void) size;
}

static void
nop_free (const volatile void *pointer)
{
  (void) pointer;
}

static void
on_free (const volatile void *pointer)
{
  frees++;
  if (pointer == NULL)
    mismatches++;
}

#ifdef NAMED_HOOKS
static volatile size_t named_mallocs, named_frees;

void
__sanitizer_malloc_hook (const volatile void *pointer, size_t size)
{
  (void) pointer;
  (void) size;
  named_mallocs++;
}

void
__sanitizer_free_hook (const volatile void *pointer)
{
  (void) pointer;
  named_frees++;
}
#endif

#define EXPECT_LAST(pointer, size)                                             \
  do                                                                           \
    {                                                                          \
      if (last_allocated != (pointer) || last_size != (size))                  \
        mismatches++;                                                          \
    }                                                                          \
  while (0)

int
main (void)
{
  void *block;
  char *volatile p;
  int installed = 0;

  /* Before any hook: not seen.  */
  p = malloc (7);
  free (p);
  /* A null hook is refused; then 5 pairs fit and a sixth does not.  */
  installed -= __sanitizer_install_malloc_and_free_hooks (on_malloc, NULL);
  for (int i = 0; i < 6; i++)
    installed
        += __sanitizer_install_malloc_and_free_hooks (
               i == 0 ? on_malloc : nop_malloc, i == 0 ? on_free : nop_free)
           != 0;

  p = malloc (10); /* 1 */
  EXPECT_LAST (p, 10);
  p = realloc (p, 100); /* 2, and free 1 */
  EXPECT_LAST (p, 100);
  free (p);          /* free 2 */
  p = calloc (4, 8); /* 3 */
  EXPECT_LAST (p, 32);
  free_sized (p, 32);          /* free 3 */
  p = aligned_alloc (64, 128); /* 4 */
  EXPECT_LAST (p, 128);
  free (p);                                 /* free 4 */
  if (posix_memalign (&block, 32, 48) == 0) /* 5 */
    EXPECT_LAST (block, 48);
  free (block);       /* free 5 */
  p = malloc (12345); /* 6, its hook allocates */
  free (p);           /* free 6 */
  free (NULL);        /* not seen */
  printf ("installed %d mallocs %zu frees %zu bytes %zu mismatches %zu\n",
          installed, (size_t) mallocs, (size_t) frees, (size_t) bytes,
          (size_t) mismatches);
#ifdef NAMED_HOOKS
  printf ("named mallocs %zu frees %zu\n", (size_t) named_mallocs,
          (size_t) named_frees);
#endif
  return 0;
}
