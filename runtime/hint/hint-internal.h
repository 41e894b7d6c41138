/* What hint.c (the mode, the arenas, the C entry points) gives new.c (the
   C++ operator new overloads).  Nothing here is exported: the library is
   built with -fvisibility=hidden and only HINT_EXPORT symbols are.  */

#ifndef MEMPROF_HINT_INTERNAL_H
#define MEMPROF_HINT_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jemalloc/jemalloc.h>

#include "memprof/hint.h"

#define HINT_EXPORT __attribute__ ((visibility ("default")))
#define LIKELY(x) __builtin_expect (!!(x), 1)
#define UNLIKELY(x) __builtin_expect (!!(x), 0)

/* How the process serves hinted calls, decided once.  */
enum hint_mode
{
  HINT_MODE_UNDECIDED,
  HINT_MODE_ARENAS,  /* jemalloc is the program's malloc: use the arenas */
  HINT_MODE_FORWARD, /* call the unhinted function instead */
};

extern _Atomic int hint_mode;
int hint_decide_mode (void);

/* True when every entry point must call the unhinted function instead:
   libmemprof is in the process, or the program's malloc is not
   jemalloc's.  Decided at the library's constructor, or at the first
   hinted call if that comes earlier.  */
static inline bool
hint_forwarding (void)
{
  int mode = atomic_load_explicit (&hint_mode, memory_order_relaxed);

  if (UNLIKELY (mode == HINT_MODE_UNDECIDED))
    mode = hint_decide_mode ();
  return mode == HINT_MODE_FORWARD;
}

/* One jemalloc arena per class of hint.  FLAGS are the mallocx flags that
   place an allocation there (MALLOCX_ARENA, and MALLOCX_TCACHE_NONE);
   HINT_FLAGS_UNSET until the first hinted allocation of the class creates
   the arena.  */
#define HINT_FLAGS_UNSET (-1)

struct hint_arena
{
  const char *name; /* "cold" or "hot", for messages */
  _Atomic int flags;
};

extern struct hint_arena hint_arenas[2];
int hint_arena_create (struct hint_arena *arena);

/* Each thread's explicit jemalloc thread cache for each class, as
   MALLOCX_TCACHE flags (0: not made yet; HINT_TCACHE_NONE: jemalloc would
   not make one, the arena is used without a cache).  */
#define HINT_TCACHE_NONE (-1)
extern __thread int hint_thread_tcache[2]
    __attribute__ ((tls_model ("initial-exec")));
int hint_tcache_create (unsigned class_index, int arena_flags);

/* The mallocx flags for HINT: its class's arena, created if needed, and
   this thread's cache of that arena's blocks, made if needed.  */
static inline int
hint_flags (unsigned char hint)
{
  unsigned class_index = hint >= MEMPROF_HINT_HOT_MIN;
  struct hint_arena *arena = &hint_arenas[class_index];
  int flags = atomic_load_explicit (&arena->flags, memory_order_acquire);
  int tcache = hint_thread_tcache[class_index];

  if (UNLIKELY (flags == HINT_FLAGS_UNSET))
    flags = hint_arena_create (arena);
  if (LIKELY (tcache > 0))
    return (flags & ~MALLOCX_TCACHE_NONE) | tcache;
  if (UNLIKELY (tcache == 0))
    {
      tcache = hint_tcache_create (class_index, flags);
      if (tcache > 0)
        return (flags & ~MALLOCX_TCACHE_NONE) | tcache;
    }
  return flags;
}

/* ---- The hinted arenas' address ranges, the program's free and each
   thread's cache of hinted blocks (cache.c) ---- */

/* Both classes' ranges: [hint_range_base, + hint_range_bytes), the cold
   class's half first; 0 bytes until made, or when they cannot be.  */
#define HINT_RANGE_BYTES ((uintptr_t) 1 << 34) /* 16 GiB each */
extern uintptr_t hint_range_base;
extern uintptr_t hint_range_bytes;
extent_hooks_t *hint_range_hooks (unsigned class_index);

/* Is BLOCK hinted, of class CLASS_INDEX (its arena's range)?  */
static inline bool
hint_block_of_class (const void *block, unsigned class_index)
{
  uintptr_t offset = (uintptr_t) block - hint_range_base;

  return offset < hint_range_bytes
         && (offset >= HINT_RANGE_BYTES) == (class_index != 0);
}

/* The bins of the cache: jemalloc's size classes from 16 to
   HINT_CACHE_MAX_SIZE bytes (bin 0 is no bin).  */
#define HINT_BINS 21
#define HINT_CACHE_MAX_SIZE 1024
extern const unsigned short hint_bin_size[HINT_BINS];

struct hint_cache
{
  void *head[2][HINT_BINS]; /* freed blocks, linked by their first word */
  unsigned count[2][HINT_BINS];
  /* Per class: the frees in a row that found their bin full (cache.c,
     "A full streak").  */
  unsigned full_streak[2];
};

extern __thread struct hint_cache *hint_thread_cache
    __attribute__ ((tls_model ("initial-exec")));
void hint_cache_create (void);
void *hint_realloc_default (void *block, size_t size);
void *hint_cache_refill (struct hint_cache *cache, unsigned class_index,
                         unsigned bin, unsigned char hint);
void hint_cache_destroy (void);

/* The bin of SIZE bytes, 1 to HINT_CACHE_MAX_SIZE: 16-byte steps up to
   128, then four classes per doubling, as jemalloc's.  */
static inline unsigned
hint_bin_of (size_t size)
{
  unsigned lg;

  if (size <= 128)
    return (unsigned) ((size + 15) >> 4);
  lg = 63 - (unsigned) __builtin_clzl (size - 1);
  return 9 + (lg - 7) * 4
         + (unsigned) ((size - 1 - ((size_t) 1 << lg)) >> (lg - 2));
}

/* jemalloc's mallocx, for which a size of 0 is undefined: 0 asks for 1
   byte, as malloc (0) does inside jemalloc.  NULL when jemalloc cannot,
   errno unspecified.  */
static inline void *
hint_allocate (size_t size, int flags)
{
  return mallocx (size == 0 ? 1 : size, flags);
}

/* The last freed block of this thread's bin of SIZE bytes of HINT's
   class, taken from the bin; NULL when the bin is empty or SIZE has no
   bin.  */
static inline void *
hint_cache_pop (size_t size, unsigned char hint)
{
  struct hint_cache *cache = hint_thread_cache;
  unsigned class_index = hint >= MEMPROF_HINT_HOT_MIN;

  if (LIKELY (cache != NULL && size - 1 < HINT_CACHE_MAX_SIZE))
    {
      unsigned bin = hint_bin_of (size);
      void *block = cache->head[class_index][bin];

      if (LIKELY (block != NULL))
        {
          cache->head[class_index][bin] = *(void **) block;
          cache->count[class_index][bin]--;
          return block;
        }
    }
  return NULL;
}

/* A hinted allocation of SIZE bytes, as malloc: from this thread's cache
   of the class's freed blocks of SIZE's bin, or, the bin empty, from the
   class's arena in a batch of blocks of the bin's size (so each fits the
   bin when freed): one returned, the others put in the bin.  */
static inline void *
hint_allocate_cached (size_t size, unsigned char hint)
{
  struct hint_cache *cache = hint_thread_cache;
  unsigned class_index = hint >= MEMPROF_HINT_HOT_MIN;
  void *block = hint_cache_pop (size, hint);

  if (LIKELY (block != NULL))
    return block;
  if (cache != NULL && size - 1 < HINT_CACHE_MAX_SIZE)
    return hint_cache_refill (cache, class_index, hint_bin_of (size), hint);
  return hint_allocate (size, hint_flags (hint));
}

static inline bool
is_power_of_two (size_t value)
{
  return value != 0 && (value & (value - 1)) == 0;
}

/* mallocx flags for an alignment that is a power of two.  */
static inline int
alignment_flags (size_t alignment)
{
  return MALLOCX_LG_ALIGN (__builtin_ctzl (alignment));
}

/* The hinted entry points by hidden names (aliases defined in hint.c),
   for the context-classified ones to call directly.  */
void *hint_internal_calloc (size_t count, size_t size, unsigned char hint);
void *hint_internal_realloc (void *pointer, size_t size, unsigned char hint);
void *hint_internal_aligned_alloc (size_t alignment, size_t size,
                                   unsigned char hint);
void *hint_internal_memalign (size_t alignment, size_t size,
                              unsigned char hint);
int hint_internal_posix_memalign (void **result, size_t alignment, size_t size,
                                  unsigned char hint);
char *hint_internal_strdup (const char *string, unsigned char hint);
char *hint_internal_strndup (const char *string, size_t limit,
                             unsigned char hint);

#endif /* MEMPROF_HINT_INTERNAL_H */
