/* libmemprof_hint: the hinted arenas' own address ranges, the program's
   free, and each thread's cache of hinted blocks (docs/hint.md, "The
   hinted path").

   Ranges.  The cold and the hot arena get their memory from one
   reservation made at the first hinted allocation (HINT_RANGE_BYTES per
   class, PROT_NONE until jemalloc asks for an extent, which is then made
   readable and writable): jemalloc's extent hooks of the two arenas
   hand out consecutive pieces of the class's range.  A block is hinted,
   and of which class, by its address alone: two compares.  An extent
   jemalloc gives back stays in jemalloc's hands (dalloc refuses, as for
   retained memory; purging gives the pages back to the system); when a
   class's range is used up, or could not be reserved, its extents come
   from jemalloc's default hooks, outside the range, and such blocks are
   freed as plain ones.

   Free.  The library defines free, and is linked before jemalloc
   (`pkg-config --libs memprof-hint`), so the program's free is this
   one: a block outside the ranges goes on to the next free (jemalloc's,
   by dlsym (RTLD_NEXT), a tail call); a hinted block goes to this
   thread's cache of its class.  Without that, a hinted block went to the
   thread's automatic jemalloc cache, where the next plain malloc of its
   size took it, and each hinted allocation refilled its class's explicit
   cache from the arena under its lock.

   The cache.  Per thread, per class, per size bin up to CACHE_MAX_SIZE
   bytes (jemalloc's own size classes, 16 bytes and up): a list of freed
   blocks, linked through their first word, at most CACHE_BLOCKS each.
   A hinted malloc of a size the bins cover takes the bin's last freed
   block, or asks the class's arena (through the thread's explicit
   tcache) for the bin's size; a hinted free gives the block to the bin
   of its usable size (sallocx), or, with the bin full, to jemalloc's own
   free (its automatic cache: a program giving back its blocks at exit),
   or, of a size no bin has, to the explicit tcache of its class.  So a hinted pair
   costs a size's bin, a list pop, a range test, sallocx and a list push,
   where jemalloc's own pair is its own tcache's pop and push.  After
   many frees of a class in a row found their bins full (a full streak,
   below), its frees go to jemalloc's free without sallocx until one in
   64 finds room.  The caches are given back when the thread exits.  */

#define _GNU_SOURCE
#include "hint-internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Freed blocks one bin of one thread keeps before giving them to the
   explicit tcache.  */
#define CACHE_BLOCKS 64

uintptr_t hint_range_base;
uintptr_t hint_range_bytes;

const unsigned short hint_bin_size[HINT_BINS] = {
  0,   16,  32,  48,  64,  80,  96,  112, 128, 160,  192,
  224, 256, 320, 384, 448, 512, 640, 768, 896, 1024,
};

__thread struct hint_cache *hint_thread_cache
    __attribute__ ((tls_model ("initial-exec")));

/* ---- The ranges and the extent hooks ---- */

struct range
{
  extent_hooks_t hooks; /* first: jemalloc passes a pointer to it */
  uintptr_t start, end, cursor;
  pthread_mutex_t lock;
};

static struct range ranges[2];
static extent_hooks_t *default_hooks;

static bool
in_range (const struct range *range, const void *address, size_t size)
{
  return (uintptr_t) address >= range->start
         && (uintptr_t) address + size <= range->end;
}

static void *
range_alloc (extent_hooks_t *hooks, void *new_address, size_t size,
             size_t alignment, bool *zero, bool *commit, unsigned arena)
{
  struct range *range = (struct range *) hooks;
  void *address = NULL;

  if (new_address == NULL)
    {
      pthread_mutex_lock (&range->lock);
      uintptr_t start = (range->cursor + alignment - 1) & ~(alignment - 1);
      if (start >= range->cursor && start + size > start
          && start + size <= range->end
          && mprotect ((void *) start, size, PROT_READ | PROT_WRITE) == 0)
        {
          range->cursor = start + size;
          address = (void *) start;
        }
      pthread_mutex_unlock (&range->lock);
    }
  if (address != NULL)
    {
      /* Fresh pages of an anonymous mapping: zero, and committed.  */
      *zero = true;
      *commit = true;
      return address;
    }
  return default_hooks->alloc (default_hooks, new_address, size, alignment,
                               zero, commit, arena);
}

static bool
range_dalloc (extent_hooks_t *hooks, void *address, size_t size, bool committed,
              unsigned arena)
{
  if (in_range ((struct range *) hooks, address, size))
    return true; /* kept by jemalloc, as retained memory */
  return default_hooks->dalloc (default_hooks, address, size, committed, arena);
}

static void
range_destroy (extent_hooks_t *hooks, void *address, size_t size,
               bool committed, unsigned arena)
{
  if (in_range ((struct range *) hooks, address, size))
    madvise (address, size, MADV_DONTNEED);
  else
    default_hooks->destroy (default_hooks, address, size, committed, arena);
}

static bool
range_commit (extent_hooks_t *hooks, void *address, size_t size, size_t offset,
              size_t length, unsigned arena)
{
  if (in_range ((struct range *) hooks, address, size))
    return false; /* always readable and writable */
  return default_hooks->commit (default_hooks, address, size, offset, length,
                                arena);
}

static bool
range_decommit (extent_hooks_t *hooks, void *address, size_t size,
                size_t offset, size_t length, unsigned arena)
{
  if (in_range ((struct range *) hooks, address, size))
    return true; /* refused: jemalloc purges instead */
  return default_hooks->decommit (default_hooks, address, size, offset, length,
                                  arena);
}

static bool
range_purge (extent_hooks_t *hooks, void *address, size_t size, size_t offset,
             size_t length, unsigned arena, int advice, extent_purge_t *other)
{
  if (in_range ((struct range *) hooks, address, size))
    return madvise ((char *) address + offset, length, advice) != 0;
  if (other == NULL)
    return true;
  return other (default_hooks, address, size, offset, length, arena);
}

static bool
range_purge_lazy (extent_hooks_t *hooks, void *address, size_t size,
                  size_t offset, size_t length, unsigned arena)
{
  return range_purge (hooks, address, size, offset, length, arena, MADV_FREE,
                      default_hooks->purge_lazy);
}

static bool
range_purge_forced (extent_hooks_t *hooks, void *address, size_t size,
                    size_t offset, size_t length, unsigned arena)
{
  return range_purge (hooks, address, size, offset, length, arena,
                      MADV_DONTNEED, default_hooks->purge_forced);
}

static bool
range_split (extent_hooks_t *hooks, void *address, size_t size, size_t size_a,
             size_t size_b, bool committed, unsigned arena)
{
  if (in_range ((struct range *) hooks, address, size))
    return false;
  if (default_hooks->split == NULL)
    return true;
  return default_hooks->split (default_hooks, address, size, size_a, size_b,
                               committed, arena);
}

/* Two pieces merge only on the same side of the range's bounds.  */
static bool
range_merge (extent_hooks_t *hooks, void *address_a, size_t size_a,
             void *address_b, size_t size_b, bool committed, unsigned arena)
{
  struct range *range = (struct range *) hooks;
  bool a = in_range (range, address_a, size_a);

  if (a != in_range (range, address_b, size_b))
    return true;
  if (a)
    return false;
  if (default_hooks->merge == NULL)
    return true;
  return default_hooks->merge (default_hooks, address_a, size_a, address_b,
                               size_b, committed, arena);
}

static pthread_once_t ranges_once = PTHREAD_ONCE_INIT;

/* Reserve both classes' ranges (PROT_NONE: address space, no memory) and
   learn jemalloc's default hooks; without either, no range.  */
static void
reserve_ranges (void)
{
  size_t length = sizeof default_hooks;
  void *reserved;

  if (mallctl ("arena.0.extent_hooks", &default_hooks, &length, NULL, 0) != 0
      || default_hooks == NULL)
    return;
  reserved = mmap (NULL, 2 * HINT_RANGE_BYTES, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (reserved == MAP_FAILED)
    return;
  for (unsigned c = 0; c < 2; c++)
    {
      struct range *range = &ranges[c];
      range->hooks = (extent_hooks_t){
        range_alloc,        range_dalloc,   range_destroy,
        range_commit,       range_decommit, range_purge_lazy,
        range_purge_forced, range_split,    range_merge,
      };
      range->start = range->cursor
          = (uintptr_t) reserved + c * HINT_RANGE_BYTES;
      range->end = range->start + HINT_RANGE_BYTES;
      pthread_mutex_init (&range->lock, NULL);
    }
  hint_range_base = (uintptr_t) reserved;
  hint_range_bytes = 2 * HINT_RANGE_BYTES;
}

/* The extent hooks for the arena of class CLASS_INDEX, or NULL: the
   default ones.  */
extent_hooks_t *
hint_range_hooks (unsigned class_index)
{
  pthread_once (&ranges_once, reserve_ranges);
  return hint_range_bytes != 0 ? &ranges[class_index].hooks : NULL;
}

/* ---- Refill ----
   A hinted malloc that finds its bin empty takes a batch of blocks from
   the class's explicit tcache (jemalloc's experimental.batch_alloc, one
   mallctl: the tcache's pops, its refill from the arena when empty),
   not one mallocx: mallocx with flags has no fast path (about 140
   instructions a block on Lua's cold blocks, which are kept to the end
   and so always find their bin empty; the batch, about 20).  The blocks
   come in the tcache's order (address order from a fresh slab), and the
   bin hands them out in that order.  A batch is at most REFILL_BYTES and
   REFILL_BLOCKS, so a bin never holds more than that unasked.  Without
   the mallctl (another jemalloc), or when it fills nothing, one mallocx.
   Each mallctl costs about 900 instructions whatever it fills (Lua's
   cold blocks at 1000 rounds: 8,690 batches of 16 blocks, 7.8 M
   instructions); batches of 32 blocks and 4 KiB, half as many: the run
   3078.5 M to 3075.4 M (64 blocks, 8 KiB: 3075.0 M, not worth the
   memory a bin holds unasked).  */

#define REFILL_BLOCKS 32
#define REFILL_BYTES 4096

/* jemalloc 5.3's input of experimental.batch_alloc.  */
struct batch_alloc_input
{
  void **blocks;
  size_t count;
  size_t size;
  int flags;
};

static size_t batch_alloc_mib[2];
static _Atomic size_t batch_alloc_mib_length;
static pthread_once_t batch_alloc_once = PTHREAD_ONCE_INIT;

static void
find_batch_alloc (void)
{
  size_t length = 2;

  if (mallctlnametomib ("experimental.batch_alloc", batch_alloc_mib, &length)
      == 0)
    atomic_store_explicit (&batch_alloc_mib_length, length,
                           memory_order_release);
}

void *
hint_cache_refill (struct hint_cache *cache, unsigned class_index, unsigned bin,
                   unsigned char hint)
{
  size_t size = hint_bin_size[bin];
  void *blocks[REFILL_BLOCKS];
  size_t want = REFILL_BYTES / size, filled = 0, length = sizeof filled;
  size_t mib_length;
  struct batch_alloc_input input;
  int flags = hint_flags (hint);

  pthread_once (&batch_alloc_once, find_batch_alloc);
  mib_length
      = atomic_load_explicit (&batch_alloc_mib_length, memory_order_acquire);
  if (want > REFILL_BLOCKS)
    want = REFILL_BLOCKS;
  input = (struct batch_alloc_input){ blocks, want, size, flags };
  if (want < 2 || mib_length == 0
      || mallctlbymib (batch_alloc_mib, mib_length, &filled, &length, &input,
                       sizeof input)
             != 0
      || filled == 0 || filled > want)
    return hint_allocate (size, flags);
  /* The bin is empty: blocks[1] on top, handed out next.  */
  for (size_t i = filled - 1; i > 0; i--)
    {
      *(void **) blocks[i] = cache->head[class_index][bin];
      cache->head[class_index][bin] = blocks[i];
    }
  cache->count[class_index][bin] += (unsigned) (filled - 1);
  return blocks[0];
}

/* ---- Free ---- */

typedef void free_function (void *);
static void first_plain_free (void *pointer);
/* jemalloc's free once found (at start-up, cache_initialize), before
   that first_plain_free, which looks it up: free then jumps to it with
   no test (2 instructions of 7 a plain free).  */
static free_function *next_free = first_plain_free;

/* Is NEXT, read from next_free, jemalloc's free?  */
#define NEXT_FREE_FOUND(next) ((next) != first_plain_free)

/* Set while this thread looks up the next definition of one of ours:
   dlsym frees the message of an earlier failed lookup, with free, which
   is this library's.  */
static __thread bool finding_next __attribute__ ((tls_model ("initial-exec")));

/* The definition of NAME that follows this library's (jemalloc's), or
   FALLBACK when there is none or this thread is looking one up already.  */
static void *
find_next (const char *name, void *fallback)
{
  void *found;

  if (finding_next)
    return fallback;
  finding_next = true;
  found = dlsym (RTLD_NEXT, name);
  finding_next = false;
  return found != NULL ? found : fallback;
}

static void
ignore_free (void *pointer)
{
  (void) pointer; /* one message of dlerror's, left allocated */
}

static free_function *
find_next_free (void)
{
  free_function *found = (free_function *) find_next ("free", ignore_free);

  if (found != ignore_free)
    next_free = found;
  return found;
}

/* Before the library's other constructors, whose failed dlsym would
   leave a message for the next dlsym to free.  */
__attribute__ ((constructor (101))) static void
cache_initialize (void)
{
  find_next_free ();
}

/* The thread's cache of hinted blocks, made with its first explicit
   tcache (hint_tcache_create, which also has it given back when the
   thread exits); it stays NULL if it cannot be made.  */
void
hint_cache_create (void)
{
  if (hint_thread_cache == NULL)
    hint_thread_cache = mallocx (sizeof *hint_thread_cache,
                                 MALLOCX_ZERO | MALLOCX_TCACHE_NONE);
}

/* The mallocx flags of this thread's explicit tcache of class
   CLASS_INDEX (none when not made: the block goes to its arena).  */
static inline int
tcache_flags (unsigned class_index)
{
  int tcache = hint_thread_tcache[class_index];

  return tcache > 0 ? tcache : MALLOCX_TCACHE_NONE;
}

/* Give BLOCK, hinted of class CLASS_INDEX, to its class's explicit tcache
   (or to its arena, the tcache not made).  */
static void
give_back (void *block, unsigned class_index)
{
  dallocx (block, tcache_flags (class_index));
}

/* A full streak: after FULL_STREAK frees of a class in a row found
   their bins full (a program giving back its blocks, Lua's lua_close:
   139,077 of 143,460 hinted frees at 1000 rounds), the class's frees go
   to jemalloc's free without asking jemalloc their size (sallocx, 39
   instructions) but one in FULL_STREAK, which looks again: a bin with
   room ends the streak.  */
#define FULL_STREAK 64

/* A hinted block is freed into this thread's CACHE, STREAK its class's
   full streak before this free: into the bin of its size.  */
static void __attribute__ ((noinline))
free_into_bin (void *block, unsigned class_index, struct hint_cache *cache,
               unsigned streak)
{
  size_t size = sallocx (block, 0);
  unsigned bin = size <= HINT_CACHE_MAX_SIZE ? hint_bin_of (size) : 0;

  if (LIKELY (bin != 0 && hint_bin_size[bin] == size))
    {
      if (LIKELY (cache->count[class_index][bin] < CACHE_BLOCKS))
        {
          *(void **) block = cache->head[class_index][bin];
          cache->head[class_index][bin] = block;
          cache->count[class_index][bin]++;
          cache->full_streak[class_index] = 0;
          return;
        }
      if (streak < FULL_STREAK)
        cache->full_streak[class_index] = streak + 1;
      /* The bin full (nearly always a program giving back its blocks at
         exit): jemalloc's own free, whose fast path puts it in the
         thread's automatic cache (about 20 instructions, where sdallocx
         into the explicit tcache took 123), where a plain malloc of its
         size may take it.  */
      if (LIKELY (NEXT_FREE_FOUND (next_free)))
        {
          next_free (block);
          return;
        }
    }
  /* Its size known, jemalloc need not look it up again.  */
  sdallocx (block, size, tcache_flags (class_index));
}

/* A hinted block is freed: into this thread's bin of its size, or in a
   full streak to jemalloc's free, by a tail call (no register saved).  */
static void __attribute__ ((noinline))
free_hinted (void *block, unsigned class_index)
{
  struct hint_cache *cache = hint_thread_cache;
  free_function *next = next_free;

  /* A thread that has made no hinted block has no cache.  */
  if (LIKELY (cache != NULL))
    {
      unsigned streak = cache->full_streak[class_index];

      if (UNLIKELY (streak >= FULL_STREAK) && LIKELY (NEXT_FREE_FOUND (next))
          && (cache->full_streak[class_index] = streak + 1) % FULL_STREAK != 0)
        {
          next (block);
          return;
        }
      free_into_bin (block, class_index, cache, streak);
      return;
    }
  give_back (block, class_index);
}

/* A free before jemalloc's was found (before cache_initialize, or while
   it is not found): the next free looked up.  */
static void __attribute__ ((noinline)) first_plain_free (void *pointer)
{
  find_next_free () (pointer);
}

/* Out of line: the common case, a plain block, is then a range test and
   a jump to jemalloc's free.  */
HINT_EXPORT void
free (void *pointer)
{
  uintptr_t offset = (uintptr_t) pointer - hint_range_base;
  free_function *next = next_free;

  if (UNLIKELY (offset < hint_range_bytes))
    free_hinted (pointer, offset >= HINT_RANGE_BYTES);
  else
    next (pointer);
}

/* ---- Realloc ----

   The library defines realloc too, for the same reason as free: a
   hinted block reallocated by jemalloc's realloc would, when it moves,
   be freed into the thread's automatic jemalloc cache, where the next
   plain malloc of its size takes it (a plain block in a hinted range,
   later freed into a hinted bin and handed out as hinted).  A hinted
   block stays in its class: resized by rallocx in its class's arena
   (through this thread's explicit tcache), as __memprof_hint_realloc
   does for a block of its class; a block outside the ranges goes on to
   the next realloc (jemalloc's).  */

typedef void *realloc_function (void *, size_t);
static realloc_function *next_realloc;
/* Only while dlsym looks the next realloc up, should it reallocate:
   jemalloc's own functions (the program's malloc is jemalloc's whenever
   a block can be hinted).  */
static void *
realloc_by_jemalloc (void *pointer, size_t size)
{
  if (pointer == NULL)
    return mallocx (size == 0 ? 1 : size, 0);
  if (size == 0)
    {
      dallocx (pointer, 0);
      return NULL;
    }
  return rallocx (pointer, size, 0);
}

static realloc_function *
find_next_realloc (void)
{
  realloc_function *found
      = (realloc_function *) find_next ("realloc", realloc_by_jemalloc);

  if (found != realloc_by_jemalloc)
    next_realloc = found;
  return found;
}

__attribute__ ((constructor (101))) static void
realloc_initialize (void)
{
  find_next_realloc ();
}

/* What realloc (P, 0) does, by jemalloc's opt.zero_realloc: "free" (the
   default of jemalloc 5.3: P freed, NULL returned), "alloc" (P resized to
   the least size) or "abort" (left to jemalloc's realloc).  */
enum zero_realloc
{
  ZERO_REALLOC_UNKNOWN,
  ZERO_REALLOC_FREE,
  ZERO_REALLOC_ALLOC,
  ZERO_REALLOC_JEMALLOC,
};

static enum zero_realloc
zero_realloc_action (void)
{
  static _Atomic int action = ZERO_REALLOC_UNKNOWN;
  int known = atomic_load_explicit (&action, memory_order_relaxed);
  const char *name = NULL;
  size_t length = sizeof name;

  if (known != ZERO_REALLOC_UNKNOWN)
    return (enum zero_realloc) known;
  if (mallctl ("opt.zero_realloc", &name, &length, NULL, 0) != 0 || name == NULL
      || strcmp (name, "free") == 0)
    known = ZERO_REALLOC_FREE;
  else if (strcmp (name, "alloc") == 0)
    known = ZERO_REALLOC_ALLOC;
  else
    known = ZERO_REALLOC_JEMALLOC;
  atomic_store_explicit (&action, known, memory_order_relaxed);
  return (enum zero_realloc) known;
}

/* A hinted BLOCK of class CLASS_INDEX resized to SIZE bytes by a
   realloc the profile did not classify: in its class.  */
static void *__attribute__ ((noinline))
realloc_hinted (void *block, size_t size, unsigned class_index)
{
  if (size == 0)
    switch (zero_realloc_action ())
      {
      case ZERO_REALLOC_FREE:
        free_hinted (block, class_index);
        return NULL;
      case ZERO_REALLOC_ALLOC:
        size = 1;
        break;
      default:
        return next_realloc (block, 0);
      }
  return hint_internal_realloc (
      block, size, class_index ? MEMPROF_HINT_HOT : MEMPROF_HINT_COLD);
}

/* The first call of plain_realloc: the next realloc looked up.  */
static void *__attribute__ ((noinline))
first_plain_realloc (void *pointer, size_t size)
{
  return find_next_realloc () (pointer, size);
}

/* The next realloc (jemalloc's), for a block outside the ranges.  */
static inline void *
plain_realloc (void *pointer, size_t size)
{
  realloc_function *next = next_realloc;

  if (UNLIKELY (next == NULL))
    return first_plain_realloc (pointer, size);
  return next (pointer, size);
}

HINT_EXPORT void *
realloc (void *pointer, size_t size)
{
  uintptr_t offset = (uintptr_t) pointer - hint_range_base;

  if (UNLIKELY (offset < hint_range_bytes))
    return realloc_hinted (pointer, size, offset >= HINT_RANGE_BYTES);
  return plain_realloc (pointer, size);
}

/* A hinted BLOCK reallocated by a context the profile leaves to the
   default class (a context-classified realloc that decided 0): moved to
   jemalloc's default arenas, as a new allocation of that context would
   be, and freed into this thread's cache of its class (jemalloc's
   realloc would free it into the automatic cache; it keeps it in place
   when SIZE fits its size class).  A block outside the ranges is
   jemalloc's realloc's.  */
static void *__attribute__ ((noinline))
realloc_to_default (void *block, size_t size, unsigned class_index)
{
  void *fresh;
  size_t usable;

  if (size == 0)
    return realloc_hinted (block, 0, class_index);
  fresh = malloc (size);
  if (UNLIKELY (fresh == NULL))
    return NULL;
  usable = sallocx (block, 0);
  memcpy (fresh, block, usable < size ? usable : size);
  free_hinted (block, class_index);
  return fresh;
}

void *
hint_realloc_default (void *block, size_t size)
{
  uintptr_t offset = (uintptr_t) block - hint_range_base;

  if (UNLIKELY (offset < hint_range_bytes))
    return realloc_to_default (block, size, offset >= HINT_RANGE_BYTES);
  return plain_realloc (block, size);
}

/* The thread exits: its cached blocks go back to their arenas.  */
void
hint_cache_destroy (void)
{
  struct hint_cache *cache = hint_thread_cache;

  if (cache == NULL)
    return;
  hint_thread_cache = NULL;
  for (unsigned c = 0; c < 2; c++)
    for (unsigned bin = 0; bin < HINT_BINS; bin++)
      for (void *block = cache->head[c][bin]; block != NULL;)
        {
          void *next = *(void **) block;
          give_back (block, c);
          block = next;
        }
  dallocx (cache, MALLOCX_TCACHE_NONE);
}
