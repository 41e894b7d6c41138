/* The failure and corner cases of every C entry point, each called
   hinted and unhinted with errno set to a sentinel before the call.
   Prints one line per case:

       CASE name plain=ptr|NULL|ret/errno hinted=ptr|NULL|ret/errno reason=E

   run.py checks that the hinted call fails exactly when the unhinted one
   (jemalloc's, the program's allocator) does, with jemalloc's errno, or
   with REASON where jemalloc leaves errno alone.  Built with
   -DGLIBC_REFERENCE and without the shim, it prints glibc's results in the
   same form (hinted = plain), for the comparison with glibc.  */

#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef GLIBC_REFERENCE
#include "memprof/hint.h"
#else
#define __memprof_hint_malloc(size, hint) malloc (size)
#define __memprof_hint_calloc(count, size, hint) calloc (count, size)
#define __memprof_hint_realloc(pointer, size, hint) realloc (pointer, size)
#define __memprof_hint_aligned_alloc(alignment, size, hint)                    \
  aligned_alloc (alignment, size)
#define __memprof_hint_memalign(alignment, size, hint)                         \
  memalign (alignment, size)
#define __memprof_hint_posix_memalign(result, alignment, size, hint)           \
  posix_memalign (result, alignment, size)
#define __memprof_hint_strndup(string, limit, hint) strndup (string, limit)
#endif

#define SENTINEL 1234
#define UNCHANGED 0 /* reason: errno must keep the sentinel */

static unsigned char hint;

/* The values are volatile so that GCC cannot see, and warn about, sizes
   it knows are too large.  */
static volatile size_t zero = 0, all = SIZE_MAX, ptrdiff_max = PTRDIFF_MAX;

static void
report (const char *name, void *plain, int plain_errno, void *hinted,
        int hinted_errno, int reason)
{
  printf ("CASE %s plain=%s/%d hinted=%s/%d reason=%d\n", name,
          plain ? "ptr" : "NULL", plain_errno, hinted ? "ptr" : "NULL",
          hinted_errno, reason);
  free (plain);
  free (hinted);
}

#define COMPARE(name, reason, plain_call, hinted_call)                         \
  do                                                                           \
    {                                                                          \
      void *plain, *hinted;                                                    \
      int plain_errno;                                                         \
      errno = SENTINEL;                                                        \
      plain = (plain_call);                                                    \
      plain_errno = errno;                                                     \
      errno = SENTINEL;                                                        \
      hinted = (hinted_call);                                                  \
      report (name, plain, plain_errno, hinted, errno, reason);                \
    }                                                                          \
  while (0)

/* realloc of a fresh 10-byte block (NULL: of NULL); the block is freed
   when realloc fails and leaves it.  */
static void *
realloc_of (int of_null, size_t size, int hinted)
{
  void *block = of_null ? NULL : malloc (10), *result;
  int saved;

  errno = SENTINEL;
  result = hinted ? __memprof_hint_realloc (block, size, hint)
                  : realloc (block, size);
  saved = errno;
  if (result == NULL && size != 0)
    free (block);
  errno = saved;
  return result;
}

#define COMPARE_REALLOC(name, reason, of_null, size)                           \
  COMPARE (name, reason, realloc_of (of_null, size, 0),                        \
           realloc_of (of_null, size, 1))

static void
compare_posix_memalign (const char *name, size_t alignment, size_t size)
{
  void *plain = (void *) 1, *hinted = (void *) 1;
  int plain_result, hinted_result, plain_errno, hinted_errno;

  errno = SENTINEL;
  plain_result = posix_memalign (&plain, alignment, size);
  plain_errno = errno;
  errno = SENTINEL;
  hinted_result
      = __memprof_hint_posix_memalign (&hinted, alignment, size, hint);
  hinted_errno = errno;
  /* A failure must leave *result alone.  */
  printf ("CASE %s plain=%d%s/%d hinted=%d%s/%d reason=%d\n", name,
          plain_result, plain == (void *) 1 ? ",untouched" : "", plain_errno,
          hinted_result, hinted == (void *) 1 ? ",untouched" : "", hinted_errno,
          UNCHANGED);
  if (plain_result == 0)
    free (plain);
  if (hinted_result == 0)
    free (hinted);
}

int
main (int argc, char **argv)
{
  hint = argc > 1 ? (unsigned char) atoi (argv[1]) : 1;

  COMPARE ("malloc(0)", ENOMEM, malloc (zero),
           __memprof_hint_malloc (zero, hint));
  COMPARE ("malloc(SIZE_MAX)", ENOMEM, malloc (all),
           __memprof_hint_malloc (all, hint));
  COMPARE ("malloc(PTRDIFF_MAX)", ENOMEM, malloc (ptrdiff_max),
           __memprof_hint_malloc (ptrdiff_max, hint));
  COMPARE ("malloc(PTRDIFF_MAX+1)", ENOMEM, malloc (ptrdiff_max + 1),
           __memprof_hint_malloc (ptrdiff_max + 1, hint));

  COMPARE ("calloc(0,0)", ENOMEM, calloc (zero, zero),
           __memprof_hint_calloc (zero, zero, hint));
  COMPARE ("calloc(0,SIZE_MAX)", ENOMEM, calloc (zero, all),
           __memprof_hint_calloc (zero, all, hint));
  COMPARE ("calloc(SIZE_MAX,2)", ENOMEM, calloc (all, 2),
           __memprof_hint_calloc (all, 2, hint));
  COMPARE ("calloc(2^32,2^32)", ENOMEM, calloc (zero + (1ul << 32), 1ul << 32),
           __memprof_hint_calloc (zero + (1ul << 32), 1ul << 32, hint));
  COMPARE ("calloc(1,PTRDIFF_MAX)", ENOMEM, calloc (1, ptrdiff_max),
           __memprof_hint_calloc (1, ptrdiff_max, hint));

  COMPARE_REALLOC ("realloc(NULL,0)", ENOMEM, 1, zero);
  COMPARE_REALLOC ("realloc(NULL,10)", ENOMEM, 1, 10);
  COMPARE_REALLOC ("realloc(NULL,SIZE_MAX)", ENOMEM, 1, all);
  COMPARE_REALLOC ("realloc(p,0)", UNCHANGED, 0, zero);
  COMPARE_REALLOC ("realloc(p,100000)", ENOMEM, 0, 100000);
  COMPARE_REALLOC ("realloc(p,SIZE_MAX)", ENOMEM, 0, all);
  COMPARE_REALLOC ("realloc(p,PTRDIFF_MAX)", ENOMEM, 0, ptrdiff_max);
  COMPARE_REALLOC ("realloc(p,PTRDIFF_MAX+1)", ENOMEM, 0, ptrdiff_max + 1);

  static const struct
  {
    const char *name;
    size_t alignment, size;
    int reason;
  } aligned[] = {
    { "(0,16)", 0, 16, EINVAL },
    { "(1,16)", 1, 16, EINVAL },
    { "(2,16)", 2, 16, EINVAL },
    { "(3,16)", 3, 16, EINVAL },
    { "(24,48)", 24, 48, EINVAL },
    { "(64,10)", 64, 10, EINVAL },
    { "(64,0)", 64, 0, EINVAL },
    { "(4096,4096)", 4096, 4096, EINVAL },
    { "(4096,SIZE_MAX)", 4096, SIZE_MAX, ENOMEM },
    { "(4096,SIZE_MAX-100)", 4096, SIZE_MAX - 100, ENOMEM },
    { "(4096,PTRDIFF_MAX)", 4096, PTRDIFF_MAX, ENOMEM },
    { "(2^62,16)", 1ul << 62, 16, ENOMEM },
    { "(2^63,16)", 1ul << 63, 16, ENOMEM },
    { "(2^63+1,16)", (1ul << 63) + 1, 16, EINVAL },
    { "(SIZE_MAX,16)", SIZE_MAX, 16, EINVAL },
  };
  for (size_t i = 0; i < sizeof aligned / sizeof aligned[0]; i++)
    {
      char name[64];
      size_t alignment = aligned[i].alignment + zero;
      size_t size = aligned[i].size + zero;

      snprintf (name, sizeof name, "aligned_alloc%s", aligned[i].name);
      COMPARE (name, aligned[i].reason, aligned_alloc (alignment, size),
               __memprof_hint_aligned_alloc (alignment, size, hint));
      snprintf (name, sizeof name, "memalign%s", aligned[i].name);
      COMPARE (name, aligned[i].reason, memalign (alignment, size),
               __memprof_hint_memalign (alignment, size, hint));
      snprintf (name, sizeof name, "posix_memalign%s", aligned[i].name);
      compare_posix_memalign (name, alignment, size);
    }
  compare_posix_memalign ("posix_memalign(4,16)", 4 + zero, 16);
  compare_posix_memalign ("posix_memalign(8,16)", 8 + zero, 16);

  COMPARE ("strndup(abc,0)", ENOMEM, strndup ("abc", zero),
           __memprof_hint_strndup ("abc", zero, hint));
  COMPARE ("strndup(abc,SIZE_MAX)", ENOMEM, strndup ("abc", all),
           __memprof_hint_strndup ("abc", all, hint));
  printf ("failure_cases done\n");
  return 0;
}
