/* libmemprof_hint: the C entry points that take an access hint, the two
   jemalloc arenas behind them, and the choice between using the arenas
   and forwarding to the unhinted functions.  (new.c has the C++ operator
   new overloads.)  docs/hint.md is the user's side of this file.

   Placement.  A hint below 128 is cold, 128 and above hot, as in tcmalloc.
   Each class has a jemalloc arena of its own, made by mallctl
   ("arenas.create") at the first allocation of the class, under a mutex
   (nothing here allocates through malloc).  Allocations ask for their
   arena with MALLOCX_ARENA and for a thread cache of their own with
   MALLOCX_TCACHE: each thread has an explicit jemalloc tcache per class
   ("tcache.create" at its first hinted allocation of the class,
   "tcache.destroy" when it exits), used for that class's arena only, so
   it holds nothing but that arena's blocks.  The thread's automatic
   cache is per size class, not per arena: with it, a hinted mallocx would
   return whatever block of the class the thread last freed or cached,
   from any arena, and a refill from the hinted arena would hand the hot
   arena's blocks to the next plain mallocs (measured: 99 of 100 plain
   malloc (48) after one hinted one landed in the hot arena).  The
   explicit cache refills in batches from its arena's bins, which hand out
   a slab's regions in address order, so hot objects are still packed
   into the hot arena's slabs one after another, without the bin lock on
   each hinted allocation (measured by `make bench-hint`: a hinted
   malloc+free pair costs what a plain jemalloc pair does).  Should
   jemalloc refuse a cache (it has a few thousand at most), the thread
   allocates from the arena without one (MALLOCX_TCACHE_NONE).

   Frees are the program's free, so a freed hinted block goes through the
   thread cache like any other and may be reused by the next plain malloc
   of its size class on that thread, until the cache flushes it back to
   its own arena.

   Forwarding.  Hinted blocks are freed by the program's free, which must
   therefore be jemalloc's.  When it is not (glibc's won the symbol lookup,
   or valgrind or a preloaded tool replaced it), or when the GCC MemProf
   profiling runtime is in the process, every entry point calls the
   unhinted function, by a tail call, so that a profiler sees the
   program's call site as its caller and a hinted build profiles as the
   unhinted one does.  */

#define _GNU_SOURCE
#include "hint-internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memprof/interface.h"

/* libmemprof's API, as a weak reference: when libmemprof is linked in
   (even statically, into the executable) this makes the linker export it
   and the dynamic linker resolve it.  dlsym covers a libmemprof opened
   later with RTLD_GLOBAL.  */
#pragma weak memprof_dump

_Atomic int hint_mode = HINT_MODE_UNDECIDED;

struct hint_arena hint_arenas[2] = {
  { "cold", HINT_FLAGS_UNSET },
  { "hot", HINT_FLAGS_UNSET },
};

static pthread_mutex_t arena_creation = PTHREAD_MUTEX_INITIALIZER;

__thread int hint_thread_tcache[2] __attribute__ ((tls_model ("initial-exec")));

/* Destroys a thread's caches when it exits (its value is not NULL once
   the thread has one).  */
static pthread_key_t tcache_key;
static pthread_once_t tcache_key_once = PTHREAD_ONCE_INIT;

/* One line on stderr, without stdio or allocation.  */
static void warn (const char *format, ...)
    __attribute__ ((format (printf, 1, 2)));

static void
warn (const char *format, ...)
{
  char line[512];
  va_list arguments;
  int length = snprintf (line, sizeof line, "libmemprof_hint: ");

  va_start (arguments, format);
  length
      += vsnprintf (line + length, sizeof line - length - 1, format, arguments);
  va_end (arguments);
  if (length > (int) sizeof line - 2)
    length = sizeof line - 2;
  line[length++] = '\n';
  if (write (STDERR_FILENO, line, length) < 0)
    return;
}

/* The file of the loaded object that holds ADDRESS, or NULL.  */
static const char *
object_of (const void *address, const void **base)
{
  Dl_info info;

  if (address == NULL || dladdr (address, &info) == 0)
    return NULL;
  *base = info.dli_fbase;
  return info.dli_fname;
}

static bool
same_object (const void *first, const void *second)
{
  const void *first_base = NULL, *second_base = NULL;

  return object_of (first, &first_base) != NULL
         && object_of (second, &second_base) != NULL
         && first_base == second_base;
}

/* Decide the mode; the first caller to decide also prints why, when the
   program is not linked as it should be.  Runs from the constructor (no
   allocator lock held, so dlsym may allocate its error message) or from a
   hinted call that came earlier.  */
int
hint_decide_mode (void)
{
  void *profiler = (void *) memprof_dump;
  void *program_malloc = dlsym (RTLD_DEFAULT, "malloc");
  const void *unused;
  const char *malloc_file = object_of (program_malloc, &unused);
  int mode, expected = HINT_MODE_UNDECIDED;
  bool profiler_owns_malloc = false;

  if (profiler == NULL)
    profiler = dlsym (RTLD_DEFAULT, "memprof_dump");
  if (profiler != NULL)
    {
      mode = HINT_MODE_FORWARD;
      profiler_owns_malloc = same_object (program_malloc, profiler);
    }
  else if (same_object (program_malloc, (void *) mallocx))
    mode = HINT_MODE_ARENAS;
  else
    mode = HINT_MODE_FORWARD;

  if (!atomic_compare_exchange_strong (&hint_mode, &expected, mode))
    return expected;
  if (profiler != NULL && !profiler_owns_malloc)
    warn ("libmemprof is loaded but the program's malloc comes from %s: "
          "allocations are not profiled; link libmemprof before "
          "libmemprof_hint and jemalloc, or preload it",
          malloc_file ? malloc_file : "an unknown object");
  else if (profiler == NULL && mode == HINT_MODE_FORWARD)
    warn ("the program's malloc comes from %s, not from jemalloc: hinted "
          "allocations go to it unhinted; link with `pkg-config --libs "
          "memprof-hint`, which puts -ljemalloc before libc",
          malloc_file ? malloc_file : "an unknown object");
  return mode;
}

__attribute__ ((constructor)) static void
hint_initialize (void)
{
  hint_forwarding ();
}

/* Create ARENA's jemalloc arena unless another thread did; return its
   flags.  Should jemalloc refuse (it has at most 4095 arenas), the class
   uses the default arenas, as unhinted calls do.  */
int
hint_arena_create (struct hint_arena *arena)
{
  int flags;

  pthread_mutex_lock (&arena_creation);
  flags = atomic_load_explicit (&arena->flags, memory_order_relaxed);
  if (flags == HINT_FLAGS_UNSET)
    {
      unsigned index;
      size_t length = sizeof index;
      /* The class's own address range (cache.c), if it could be made.  */
      extent_hooks_t *hooks = hint_range_hooks (arena == &hint_arenas[1]);
      int error = mallctl ("arenas.create", &index, &length,
                           hooks ? &hooks : NULL, hooks ? sizeof hooks : 0);

      if (error == 0)
        flags = MALLOCX_ARENA (index) | MALLOCX_TCACHE_NONE;
      else
        {
          flags = 0;
          warn ("jemalloc could not create the %s arena (mallctl "
                "arenas.create: %s): %s allocations use the default arenas",
                arena->name, strerrorname_np (error), arena->name);
        }
      atomic_store_explicit (&arena->flags, flags, memory_order_release);
    }
  pthread_mutex_unlock (&arena_creation);
  return flags;
}

/* A thread exits: its caches go back to their arenas, and whatever it
   allocates later (in another key's destructor) goes without a cache.  */
static void
tcache_destroy_all (void *unused)
{
  hint_cache_destroy ();
  for (unsigned i = 0; i < 2; i++)
    {
      int flags = hint_thread_tcache[i];
      if (flags > 0)
        {
          unsigned id = (unsigned) ((flags >> 8) - 2);
          mallctl ("tcache.destroy", NULL, NULL, &id, sizeof id);
        }
      hint_thread_tcache[i] = HINT_TCACHE_NONE;
    }
}

static void
tcache_key_create (void)
{
  if (pthread_key_create (&tcache_key, tcache_destroy_all) != 0)
    warn ("no thread-specific key for the hinted thread caches: threads "
          "that exit keep theirs");
}

/* This thread's first hinted allocation of class CLASS_INDEX, whose arena
   has ARENA_FLAGS: make its cache; its MALLOCX_TCACHE flags, or
   HINT_TCACHE_NONE.  */
int
hint_tcache_create (unsigned class_index, int arena_flags)
{
  unsigned id;
  size_t length = sizeof id;
  int error;

  hint_thread_tcache[class_index] = HINT_TCACHE_NONE;
  /* No arena of its own: the default arenas and their caches serve it.  */
  if ((arena_flags & MALLOCX_TCACHE_NONE) == 0)
    return HINT_TCACHE_NONE;
  pthread_once (&tcache_key_once, tcache_key_create);
  error = mallctl ("tcache.create", &id, &length, NULL, 0);
  if (error != 0)
    return HINT_TCACHE_NONE;
  pthread_setspecific (tcache_key, (void *) 1);
  hint_thread_tcache[class_index] = MALLOCX_TCACHE (id);
  hint_cache_create ();
  return hint_thread_tcache[class_index];
}

/* ---- The C entry points ---- */

static void *
allocate_hinted (size_t size, unsigned char hint)
{
  void *pointer = hint_allocate_cached (size, hint);

  if (UNLIKELY (pointer == NULL))
    errno = ENOMEM;
  return pointer;
}

HINT_EXPORT void *
__memprof_hint_malloc (size_t size, unsigned char hint)
{
  if (UNLIKELY (hint_forwarding ()))
    return malloc (size);
  return allocate_hinted (size, hint);
}

HINT_EXPORT void *
__memprof_hint_calloc (size_t count, size_t size, unsigned char hint)
{
  size_t bytes;
  void *pointer;

  if (UNLIKELY (hint_forwarding ()))
    return calloc (count, size);
  if (__builtin_mul_overflow (count, size, &bytes))
    {
      errno = ENOMEM;
      return NULL;
    }
  pointer = hint_allocate (bytes, hint_flags (hint) | MALLOCX_ZERO);
  if (UNLIKELY (pointer == NULL))
    errno = ENOMEM;
  return pointer;
}

/* A block that has to move goes to the hint's arena; one resized in place
   stays where it is.  */
HINT_EXPORT void *
__memprof_hint_realloc (void *pointer, size_t size, unsigned char hint)
{
  void *fresh;
  int flags;

  if (UNLIKELY (hint_forwarding ()))
    return realloc (pointer, size);
  if (pointer == NULL)
    return allocate_hinted (size, hint);
  /* rallocx (p, 0) is undefined; realloc (p, 0) is whatever jemalloc's
     opt.zero_realloc says (by default: free p, return NULL).  */
  if (size == 0)
    return realloc (pointer, 0);
  flags = hint_flags (hint);
  /* A block of another arena, moved, would be freed into this class's
     explicit tcache, and handed out by it as this class's: it goes back
     to its own arena without a cache.  */
  if (!hint_block_of_class (pointer, hint >= MEMPROF_HINT_HOT_MIN))
    flags = atomic_load_explicit (
        &hint_arenas[hint >= MEMPROF_HINT_HOT_MIN].flags, memory_order_relaxed);
  fresh = rallocx (pointer, size, flags);
  if (UNLIKELY (fresh == NULL))
    errno = ENOMEM;
  return fresh;
}

/* The aligned functions accept the alignments jemalloc's own do, the
   program's allocator being jemalloc: a power of two (and for
   posix_memalign a multiple of sizeof (void *)).  Where jemalloc's
   memalign leaves errno alone on failure, errno is set as glibc sets
   it.  */
static void *
allocate_aligned (size_t alignment, size_t size, unsigned char hint)
{
  void *pointer;

  if (!is_power_of_two (alignment))
    {
      errno = EINVAL;
      return NULL;
    }
  pointer
      = hint_allocate (size, hint_flags (hint) | alignment_flags (alignment));
  if (UNLIKELY (pointer == NULL))
    errno = ENOMEM;
  return pointer;
}

HINT_EXPORT void *
__memprof_hint_aligned_alloc (size_t alignment, size_t size, unsigned char hint)
{
  if (UNLIKELY (hint_forwarding ()))
    return aligned_alloc (alignment, size);
  return allocate_aligned (alignment, size, hint);
}

HINT_EXPORT void *
__memprof_hint_memalign (size_t alignment, size_t size, unsigned char hint)
{
  if (UNLIKELY (hint_forwarding ()))
    return memalign (alignment, size);
  return allocate_aligned (alignment, size, hint);
}

/* posix_memalign reports by its result and leaves errno alone.  */
HINT_EXPORT int
__memprof_hint_posix_memalign (void **result, size_t alignment, size_t size,
                               unsigned char hint)
{
  int saved_errno;
  void *pointer;

  if (UNLIKELY (hint_forwarding ()))
    return posix_memalign (result, alignment, size);
  if (!is_power_of_two (alignment) || alignment < sizeof (void *))
    return EINVAL;
  saved_errno = errno;
  pointer
      = hint_allocate (size, hint_flags (hint) | alignment_flags (alignment));
  errno = saved_errno;
  if (UNLIKELY (pointer == NULL))
    return ENOMEM;
  *result = pointer;
  return 0;
}

static char *
copy_string (const char *string, size_t length, unsigned char hint)
{
  char *copy = hint_allocate (length + 1, hint_flags (hint));

  if (UNLIKELY (copy == NULL))
    {
      errno = ENOMEM;
      return NULL;
    }
  memcpy (copy, string, length);
  copy[length] = '\0';
  return copy;
}

HINT_EXPORT char *
__memprof_hint_strdup (const char *string, unsigned char hint)
{
  if (UNLIKELY (hint_forwarding ()))
    return strdup (string);
  return copy_string (string, strlen (string), hint);
}

HINT_EXPORT char *
__memprof_hint_strndup (const char *string, size_t limit, unsigned char hint)
{
  if (UNLIKELY (hint_forwarding ()))
    return strndup (string, limit);
  return copy_string (string, strnlen (string, limit), hint);
}

/* The hidden names the context-classified entry points (context.c) call:
   a direct call, not one through the PLT (which another definition
   preloaded would take, and which costs an indirect jump).  */
#define HINT_INTERNAL_ALIAS(name)                                              \
  extern __typeof__ (__memprof_hint_##name) hint_internal_##name               \
      __attribute__ ((alias ("__memprof_hint_" #name),                         \
                      copy (__memprof_hint_##name)))
HINT_INTERNAL_ALIAS (calloc);
HINT_INTERNAL_ALIAS (realloc);
HINT_INTERNAL_ALIAS (aligned_alloc);
HINT_INTERNAL_ALIAS (memalign);
HINT_INTERNAL_ALIAS (posix_memalign);
HINT_INTERNAL_ALIAS (strdup);
HINT_INTERNAL_ALIAS (strndup);
