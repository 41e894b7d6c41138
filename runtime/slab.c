/* Small blocks in slots of the runtime's own (small_slots=1, full
   profiling only).

   A block of at most SLAB_MAX_SIZE bytes with malloc's alignment (or up
   to 64) gets a slot of its size class (64, 128, ... 512 bytes) instead
   of a glibc chunk with a header in front of it.  The slots are carved
   from one range of address space reserved once (SLAB_REGION_BYTES,
   committed by the kernel page by page as slots are first used), in
   spans of SLAB_SPAN_BYTES, each span of one class at a time.  Every
   slot starts on a 64-byte counter granule and holds one block, so no
   two live blocks share a shadow counter and a block's counts are exact,
   as with the header's layout.

   A slot's metadata sit out of line, in an array with one 16-byte entry
   per granule of the range (only a slot's first granule's entry is
   used): its context (NULL when the block is not recorded, or free), its
   allocation time and CPU, its size and whether the slot is in use.  A
   20-byte block costs 64 bytes of slot, 16 of metadata and 8 of shadow;
   with the header it cost a 128-byte glibc chunk and 16 of shadow.

   free, realloc and malloc_usable_size tell slot blocks from glibc's by
   comparing the address with the range (slab_owns).  The live walk
   (allocator_for_each_live) visits the slots whose context is set.

   Free slots: each thread keeps up to SLAB_CACHE_SLOTS free slots of
   each class in an array of its own (a thread-local), so that the
   common allocation and free touch neither a lock nor the slot's memory.
   An empty cache takes SLAB_CACHE_BATCH slots from its class at once, a
   full one gives its SLAB_CACHE_BATCH oldest back, under the class's
   lock; a slot freed by another thread goes into the freeing thread's
   cache (the slots of a class are one pool).  A thread's caches go back
   to their classes when it exits (a pthread key's destructor).  A class
   keeps its spans' free slots in one bit per slot, per span, so that
   taking a batch reads no slot's memory either.

   Pages given back: a span whose slots are all free leaves its class for
   the pool of empty spans, where any class takes it again (newest first).
   The pool keeps some empty spans as they are; beyond that the oldest
   empty span's pages, its metadata's and its shadow's go back to the
   kernel (madvise MADV_DONTNEED; they read as zeros when used again),
   outside the locks.  How many it keeps adapts (hysteresis): at first
   SLAB_EMPTY_SPANS_KEPT; one more each time a class takes a span whose
   pages were given back (the program wanted them again: a loop that frees
   and allocates again pays the system calls of its first rounds only);
   back to SLAB_EMPTY_SPANS_KEPT when the pool held more than that for
   slab_pool_decay_ms (SLAB_KEPT_DECAY_MS): the spans kept beyond the
   first ones were not needed for that long.  A program that frees its small blocks once gives
   all but SLAB_EMPTY_SPANS_KEPT spans' pages back at once.

   Locks: one per class guards its spans' bits, free counts and list of
   spans with free slots; spans_lock guards the pool.  An allocation
   takes a slot from its cache, takes the context and publishes it last
   (release), so that the walk sees either no context or a whole entry.
   A free clears the context (the walk no longer sees the block), folds
   the counters, and only then puts the slot in the cache (a new block in
   the slot could otherwise lose its first counts to the fold).  With no
   lock taken on that path, a walk run by another thread at the same time
   (a dump while other threads free) may still count a block that is
   being freed as live, as it may count a context whose block is freed
   after the context was read: such a dump is not one instant.  A walk run
   by a signal handler on a thread interrupted inside a free gives up, as
   when it finds a lock held.  */

#define _GNU_SOURCE
#include "internal.h"
#include "clock.h"
#include "depot_fold.h"
#include "events.h"

#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#define SLAB_CLASSES (SLAB_MAX_SIZE / MEMPROF_GRANULE_SIZE)
#define SLAB_SPANS (SLAB_REGION_BYTES >> SLAB_SPAN_SHIFT)
#define SLAB_SPAN_GRANULES (SLAB_SPAN_BYTES >> MEMPROF_GRANULE_SHIFT)
/* One bit per slot: class 0 has one slot per granule.  */
#define SLAB_BITMAP_WORDS (SLAB_SPAN_GRANULES / 64)
/* Free slots a thread keeps per class, and how many move at a time
   between the thread and the class.  */
#define SLAB_CACHE_SLOTS 64
#define SLAB_CACHE_BATCH 32
/* slab_meta.size_in_use: the size asked for, and this bit.  */
#define SLOT_IN_USE 0x8000U

struct slab_meta
{
  struct depot_context *_Atomic context; /* NULL: not recorded, or free */
  uint32_t alloc_timestamp;
  uint16_t alloc_cpu;
  uint16_t size_in_use; /* the size as requested | SLOT_IN_USE */
};

_Static_assert(sizeof (struct slab_meta) == 16, "16 bytes per slot");
_Static_assert(SLAB_MAX_SIZE < SLOT_IN_USE, "the size fits its field");
_Static_assert(SLAB_CACHE_BATCH <= SLAB_CACHE_SLOTS, "a batch fits a cache");

/* A span's bookkeeping.  Span numbers on lists are stored + 1 (0: none).  */
struct span_info
{
  uint32_t free_slots;     /* bits set in its bitmap */
  uint32_t next, previous; /* the class's partial list, or the pool */
  uint16_t cursor;         /* no bit is set in the words below it */
  bool listed;             /* on its class's partial list */
  bool committed;          /* in the pool, pages not given back */
};

uintptr_t __memprof_slab_base = SLAB_UNRESERVED;
static struct slab_meta *slab_metas;
static struct span_info *spans;
static uint64_t (*span_bits)[SLAB_BITMAP_WORDS];
static spinlock_t reserve_lock = SPINLOCK_INIT;
static bool reserve_failed;

/* The class + 1 of each span (0: not carved yet, or in the pool).  */
static uint8_t span_class[SLAB_SPANS];

/* The pool of empty spans and the range's unused rest (spans_lock).  */
static spinlock_t spans_lock = SPINLOCK_INIT;
static size_t spans_used;                 /* spans ever carved */
static uint32_t pool_newest, pool_oldest; /* empty spans, committed */
static uint32_t pool_given_back;          /* empty spans, pages given back */
static size_t pool_committed_count, pool_given_back_count;
static uint64_t spans_given_back_total;
/* Empty spans the pool keeps committed now, and when it last held no
   more than SLAB_EMPTY_SPANS_KEPT of them (runtime_now_ms).  */
static size_t pool_keep = SLAB_EMPTY_SPANS_KEPT;
static uint32_t pool_last_low_ms;
uint32_t slab_pool_decay_ms = SLAB_KEPT_DECAY_MS;

static struct
{
  spinlock_t lock;
  uint32_t partial;    /* spans with free slots (number + 1) */
  uint32_t spans_held; /* spans of the class */
  uint64_t cached;     /* slots out in the threads' caches */
  char padding[64 - sizeof (spinlock_t) - 2 * sizeof (uint32_t)
               - sizeof (uint64_t)];
} classes[SLAB_CLASSES] __attribute__ ((aligned (64)));

/* The thread's caches: each class's count and its slots, in two arrays
   so that a class's entries are found by shifts (a struct of both, 520
   bytes, took a multiplication recomputed at each use).  */
static __thread uint32_t cache_counts[SLAB_CLASSES]
    __attribute__ ((tls_model ("initial-exec")));
static __thread uintptr_t cache_slots[SLAB_CLASSES][SLAB_CACHE_SLOTS]
    __attribute__ ((tls_model ("initial-exec")));
/* The destructor is registered for this thread; it ran (the thread
   exits: no more caching).  */
static __thread bool cache_registered
    __attribute__ ((tls_model ("initial-exec")));
static __thread bool cache_closed __attribute__ ((tls_model ("initial-exec")));
/* Inside slab_free between clearing the context and caching the slot.  */
static __thread bool freeing __attribute__ ((tls_model ("initial-exec")));
static pthread_key_t cache_key;
static bool cache_key_made;

static void caches_give_back (void *unused);

static inline size_t
slot_bytes (unsigned class)
{
  return (size_t) (class + 1) * MEMPROF_GRANULE_SIZE;
}

#define SLOTS_IN_SPAN(class)                                                   \
  (SLAB_SPAN_BYTES / (((class) + 1) * MEMPROF_GRANULE_SIZE))
static const uint16_t slots_in_span[SLAB_CLASSES] = {
  SLOTS_IN_SPAN (0), SLOTS_IN_SPAN (1), SLOTS_IN_SPAN (2), SLOTS_IN_SPAN (3),
  SLOTS_IN_SPAN (4), SLOTS_IN_SPAN (5), SLOTS_IN_SPAN (6), SLOTS_IN_SPAN (7),
};
_Static_assert(SLAB_CLASSES == 8, "one entry per class");

/* A table, not a division: this is on the path of every free.  */
static inline size_t
slots_per_span (unsigned class)
{
  return slots_in_span[class];
}

static inline struct slab_meta *
meta_of (uintptr_t slot)
{
  return &slab_metas[(slot - __memprof_slab_base) >> MEMPROF_GRANULE_SHIFT];
}

static inline uintptr_t
span_start (size_t span)
{
  return __memprof_slab_base + (span << SLAB_SPAN_SHIFT);
}

/* ceil (2^32 / (class + 1)): GRANULE / (class + 1) as a multiply and a
   shift, exact for every granule number of a span (below 2^14).  */
static const uint32_t granule_divisors[SLAB_CLASSES] = {
  0xffffffffU, 0x80000000U, 0x55555556U, 0x40000000U,
  0x33333334U, 0x2aaaaaabU, 0x24924925U, 0x20000000U,
};

/* The slot number within its span of the granule GRANULE of a span of
   CLASS, where GRANULE starts a slot.  */
static inline size_t
slot_index (unsigned class, size_t granule)
{
  return class == 0 ? granule
                    : ((uint64_t) granule * granule_divisors[class]) >> 32;
}

/* The slot number within its span of the granule GRANULE of a span of
   CLASS, or -1 when GRANULE does not start a slot.  */
static inline long
slot_number (unsigned class, size_t granule)
{
  uint64_t quotient
      = class == 0 ? granule
                   : ((uint64_t) granule * granule_divisors[class]) >> 32;
  if (quotient * (class + 1) != granule || quotient >= slots_per_span (class))
    return -1;
  return (long) quotient;
}

/* Reserve the range and its metadata (once); false when that failed.  */
static __attribute__ ((noinline)) bool
reserve (void)
{
  spin_lock (&reserve_lock);
  if (__memprof_slab_base == SLAB_UNRESERVED && !reserve_failed)
    {
      size_t meta_bytes = (SLAB_REGION_BYTES >> MEMPROF_GRANULE_SHIFT)
                          * sizeof (struct slab_meta);
      size_t span_bytes = SLAB_SPANS * sizeof (struct span_info);
      size_t bits_bytes = SLAB_SPANS * sizeof *span_bits;
      void *metas = runtime_map (meta_bytes);
      void *infos = runtime_map (span_bytes);
      void *bits = runtime_map (bits_bytes);
      void *region
          = metas && infos && bits ? runtime_map (SLAB_REGION_BYTES) : NULL;
      if (region == NULL)
        {
          if (metas != NULL)
            runtime_unmap (metas, meta_bytes);
          if (infos != NULL)
            runtime_unmap (infos, span_bytes);
          if (bits != NULL)
            runtime_unmap (bits, bits_bytes);
          __atomic_store_n (&reserve_failed, true, __ATOMIC_RELAXED);
        }
      else
        {
          /* Scattered metadata and slots would commit 2 MiB at a time.  */
          madvise (metas, meta_bytes, MADV_NOHUGEPAGE);
          slab_metas = metas;
          spans = infos;
          span_bits = bits;
          /* Without the key, threads' caches are not given back when
             they exit (a few slots each).  */
          cache_key_made
              = pthread_key_create (&cache_key, caches_give_back) == 0;
          atomic_store_explicit ((_Atomic uintptr_t *) &__memprof_slab_base,
                                 (uintptr_t) region, memory_order_release);
        }
    }
  spin_unlock (&reserve_lock);
  return __memprof_slab_base != SLAB_UNRESERVED;
}

/* ---- Lists of spans (number + 1; 0: none) ---- */

static void
list_push (uint32_t *head, uint32_t *tail, size_t span)
{
  spans[span].previous = 0;
  spans[span].next = *head;
  if (*head != 0)
    spans[*head - 1].previous = (uint32_t) span + 1;
  else if (tail != NULL)
    *tail = (uint32_t) span + 1;
  *head = (uint32_t) span + 1;
}

static void
list_remove (uint32_t *head, uint32_t *tail, size_t span)
{
  uint32_t next = spans[span].next, previous = spans[span].previous;
  if (previous != 0)
    spans[previous - 1].next = next;
  else
    *head = next;
  if (next != 0)
    spans[next - 1].previous = previous;
  else if (tail != NULL)
    *tail = previous;
}

/* ---- The pool of empty spans ---- */

/* An empty span for CLASS (the newest committed one, one given back, or
   one never used), set up with every slot free and on the class's
   partial list; false when the range is used up.  Called with the
   class's lock held.  */
static bool
span_acquire (unsigned class)
{
  size_t span;
  size_t slots = slots_per_span (class);

  spin_lock (&spans_lock);
  if (pool_newest != 0)
    {
      span = pool_newest - 1;
      list_remove (&pool_newest, &pool_oldest, span);
      pool_committed_count--;
      if (pool_committed_count <= SLAB_EMPTY_SPANS_KEPT)
        pool_last_low_ms = runtime_now_ms ();
    }
  else if (pool_given_back != 0)
    {
      span = pool_given_back - 1;
      pool_given_back = spans[span].next;
      pool_given_back_count--;
      if (pool_keep < SLAB_EMPTY_SPANS_KEPT_MAX)
        pool_keep++;
    }
  else if (spans_used < SLAB_SPANS)
    span = spans_used++;
  else
    {
      spin_unlock (&spans_lock);
      return false;
    }
  spin_unlock (&spans_lock);

  memset (span_bits[span], 0, sizeof span_bits[span]);
  memset (span_bits[span], 0xff, (slots / 64) * sizeof (uint64_t));
  if (slots % 64 != 0)
    span_bits[span][slots / 64] = (1ULL << (slots % 64)) - 1;
  spans[span].free_slots = (uint32_t) slots;
  spans[span].cursor = 0;
  spans[span].listed = true;
  list_push (&classes[class].partial, NULL, span);
  classes[class].spans_held++;
  __atomic_store_n (&span_class[span], (uint8_t) (class + 1), __ATOMIC_RELEASE);
  return true;
}

/* SPAN of CLASS has all its slots free: it goes to the pool.  Called
   with the class's lock held.  The spans the pool no longer keeps are
   added to GIVE_BACK (*COUNT of them, at most CAPACITY; the rest goes at
   a later call): the caller gives their pages back (span_give_back,
   without the locks).  */
static void
span_empty (unsigned class, size_t span, long *give_back, unsigned *count,
            unsigned capacity)
{
  uint32_t now;

  if (spans[span].listed)
    list_remove (&classes[class].partial, NULL, span);
  spans[span].listed = false;
  classes[class].spans_held--;
  __atomic_store_n (&span_class[span], 0, __ATOMIC_RELEASE);
  now = runtime_now_ms ();
  spin_lock (&spans_lock);
  list_push (&pool_newest, &pool_oldest, span);
  pool_committed_count++;
  if (pool_committed_count <= SLAB_EMPTY_SPANS_KEPT)
    pool_last_low_ms = now;
  else if (pool_keep > SLAB_EMPTY_SPANS_KEPT
           && now - pool_last_low_ms > slab_pool_decay_ms)
    /* The spans kept beyond the first ones were not needed for a while.  */
    pool_keep = SLAB_EMPTY_SPANS_KEPT;
  while (pool_committed_count > pool_keep && *count < capacity)
    {
      size_t oldest = pool_oldest - 1;
      list_remove (&pool_newest, &pool_oldest, oldest);
      pool_committed_count--;
      give_back[(*count)++] = (long) oldest;
    }
  spin_unlock (&spans_lock);
}

/* Give back the pages of SPAN (off every list; its slots are all free,
   their counters cleared and their metadata without context), then put
   it on the pool's given-back list.  */
static void
span_give_back (size_t span)
{
  uintptr_t start = span_start (span);
  madvise ((void *) start, SLAB_SPAN_BYTES, MADV_DONTNEED);
  madvise (meta_of (start), SLAB_SPAN_GRANULES * sizeof (struct slab_meta),
           MADV_DONTNEED);
  shadow_clear (start, SLAB_SPAN_GRANULES);
  spin_lock (&spans_lock);
  spans[span].next = pool_given_back;
  pool_given_back = (uint32_t) span + 1;
  pool_given_back_count++;
  spans_given_back_total++;
  spin_unlock (&spans_lock);
}

/* ---- Moving slots between a class and a thread's cache ---- */

/* Take up to WANT free slots of CLASS into SLOTS; how many were taken.
   Called with the class's lock held.  */
static uint32_t
take_slots (unsigned class, uintptr_t *slots, uint32_t want)
{
  uint32_t taken = 0;
  size_t bytes = slot_bytes (class);

  while (taken < want)
    {
      if (classes[class].partial == 0 && !span_acquire (class))
        break;
      size_t span = classes[class].partial - 1;
      struct span_info *info = &spans[span];
      uint64_t *bits = span_bits[span];
      uintptr_t start = span_start (span);
      unsigned word = info->cursor;
      while (taken < want && info->free_slots > 0)
        {
          while (bits[word] == 0)
            word++;
          /* The word's free slots, in registers until the batch has
             them or the word is used up.  */
          uint64_t free_bits = bits[word];
          uintptr_t word_start = start + (size_t) word * 64 * bytes;
          uint32_t first = taken;
          do
            {
              unsigned bit = (unsigned) __builtin_ctzll (free_bits);
              free_bits &= free_bits - 1;
              slots[taken++] = word_start + bit * bytes;
            }
          while (free_bits != 0 && taken < want);
          bits[word] = free_bits;
          info->free_slots -= taken - first;
        }
      info->cursor = (uint16_t) word;
      if (info->free_slots == 0)
        {
          list_remove (&classes[class].partial, NULL, span);
          info->listed = false;
        }
    }
  classes[class].cached += taken;
  return taken;
}

/* Put the COUNT free slots SLOTS (their metadata cleared) back to CLASS,
   and give back the pages of the spans the pool no longer keeps.  */
static void
return_slots (unsigned class, const uintptr_t *slots, uint32_t count)
{
  long to_give_back[SLAB_CACHE_BATCH];
  unsigned give_back_count = 0;
  size_t slots_in_span = slots_per_span (class);

  spin_lock_hot (&classes[class].lock);
  for (uint32_t i = 0; i < count;)
    {
      /* The run of slots of one span from I: their bits, then the
         span's count and cursor once.  */
      size_t span = (slots[i] - __memprof_slab_base) >> SLAB_SPAN_SHIFT;
      uintptr_t start = span_start (span);
      struct span_info *info = &spans[span];
      uint64_t *bits = span_bits[span];
      unsigned lowest_word = info->cursor;
      uint32_t run = 0;
      do
        {
          size_t number
              = slot_index (class, (slots[i] - start) >> MEMPROF_GRANULE_SHIFT);
          bits[number / 64] |= 1ULL << (number % 64);
          if (number / 64 < lowest_word)
            lowest_word = (unsigned) (number / 64);
          run++;
          i++;
        }
      while (i < count && slots[i] - start < SLAB_SPAN_BYTES);
      info->cursor = (uint16_t) lowest_word;
      info->free_slots += run;
      if (info->free_slots == slots_in_span)
        span_empty (class, span, to_give_back, &give_back_count,
                    SLAB_CACHE_BATCH);
      else if (!info->listed)
        {
          list_push (&classes[class].partial, NULL, span);
          info->listed = true;
        }
    }
  classes[class].cached -= count;
  spin_unlock (&classes[class].lock);
  for (unsigned i = 0; i < give_back_count; i++)
    span_give_back ((size_t) to_give_back[i]);
}

/* Fill the empty cache of CLASS; false when there is no slot left.  */
static __attribute__ ((noinline)) bool
refill (unsigned class)
{
  uintptr_t *slots = cache_slots[class];
  /* Once the reservation has failed (valgrind, a tight RLIMIT_AS), no
     lock and no second attempt: every small block then goes to glibc.  */
  if (UNLIKELY (__memprof_slab_base == SLAB_UNRESERVED)
      && (__atomic_load_n (&reserve_failed, __ATOMIC_RELAXED) || !reserve ()))
    return false;
  spin_lock_hot (&classes[class].lock);
  uint32_t count
      = take_slots (class, slots, cache_closed ? 1 : SLAB_CACHE_BATCH);
  cache_counts[class] = count;
  spin_unlock (&classes[class].lock);
  /* Taken in ascending addresses; handed out (from the top) in the same
     order, as a program allocating a run of blocks reads them after.  */
  for (uint32_t low = 0, high = count; low + 1 < high; low++, high--)
    {
      uintptr_t slot = slots[low];
      slots[low] = slots[high - 1];
      slots[high - 1] = slot;
    }
  if (!cache_registered && cache_key_made && !cache_closed)
    {
      /* The value only has to be non-null for the destructor to run.
         pthread_setspecific may allocate (keys past the first 32).  */
      cache_registered = true;
      in_runtime++;
      pthread_setspecific (cache_key, &cache_registered);
      in_runtime--;
    }
  return count > 0;
}

/* The cache of CLASS is full: its SLAB_CACHE_BATCH oldest slots go back
   to the class.  */
static __attribute__ ((noinline)) void
drain (unsigned class)
{
  uintptr_t *slots = cache_slots[class];
  return_slots (class, slots, SLAB_CACHE_BATCH);
  memmove (slots, slots + SLAB_CACHE_BATCH,
           (cache_counts[class] - SLAB_CACHE_BATCH) * sizeof (uintptr_t));
  cache_counts[class] -= SLAB_CACHE_BATCH;
}

/* A thread exits: its cached slots go back to their classes, and the
   slots it frees from now on (later destructors) go back at once.  */
static void
caches_give_back (void *unused)
{
  (void) unused;
  cache_closed = true;
  for (unsigned class = 0; class < SLAB_CLASSES; class ++)
    {
      uint32_t count = cache_counts[class];
      cache_counts[class] = 0;
      if (count > 0)
        return_slots (class, cache_slots[class], count);
    }
}

/* ---- The allocator's entry points ---- */

/* allocator_capture_context for a slot: the runtime running and not the
   caller, a profile kept, the context captured here without the call;
   the rest (start-up, a trace's stacks without a profile, the runtime's
   own allocations) is allocator_capture_context's.  Slots serve
   sample_interval=1 only (slab_takes), where sampling records every
   allocation with weight 1, as here.  */
static inline struct depot_context *
capture_slot_context (size_t size, uintptr_t caller_return)
{
  uint32_t weight;
  struct depot_context *context;

  if (UNLIKELY (runtime_state != RUNTIME_RUNNING || in_runtime
                || !runtime_options.profile))
    return allocator_capture_context (size, caller_return, &weight);
  in_runtime++;
  context
      = context_capture ((int) runtime_options.max_stack_depth, caller_return);
  in_runtime--;
  return context;
}

void *
slab_allocate (size_t size, uintptr_t caller_return)
{
  unsigned class = size == 0 ? 0
                             : (unsigned) ((size - 1) >> MEMPROF_GRANULE_SHIFT);
  uint32_t count = cache_counts[class];
  uintptr_t slot;
  struct slab_meta *meta;
  struct depot_context *context;
  /* The allocation's clock reading, first: its latency overlaps the
     capture (clock.h).  */
  uint64_t tsc = clock_early_tsc ();

  /* Every cache is empty until the range is reserved: refill reserves.  */
  if (UNLIKELY (count == 0))
    {
      if (!refill (class))
        return NULL;
      count = cache_counts[class];
    }
  slot = cache_slots[class][--count];
  cache_counts[class] = count;
  meta = meta_of (slot);
  meta->size_in_use = (uint16_t) (size | SLOT_IN_USE);

  context = capture_slot_context (size, caller_return);
  if (context != NULL)
    {
      /* weight is 1: slots serve full profiling only.  */
      struct clock_stamp stamp = clock_stamp_at (tsc);
      meta->alloc_timestamp = stamp.ms;
      meta->alloc_cpu = (uint16_t) stamp.cpu;
      if (size <= MEMPROF_GRANULE_SIZE && !runtime_histogram)
        {
          /* shadow_clear of one counter, without the call.  */
          if (__memprof_shadow_base != 0)
            *memprof_shadow_for (__memprof_shadow_base, slot) = 0;
        }
      else
        shadow_clear (slot, granules_for (size));
      peak_note_allocation (context, size, 1, stamp.tsc);
      atomic_store_explicit (&meta->context, context, memory_order_release);
    }
  /* Hooks and events: one flag byte says there are none (nor a trace).  */
  if (UNLIKELY (!(
          atomic_load_explicit (&__memprof_unsampled_path, memory_order_relaxed)
          & UNSAMPLED_UNWATCHED)))
    {
      hooks_after_allocation ((void *) slot, size);
      if (events_allocations_wanted ())
        events_record_allocation (slot, size, context ? context->id : 0,
                                  caller_return);
    }
  return (void *) slot;
}

/* The class of the slot block POINTER (slab_owns it), or SLAB_CLASSES
   when POINTER is not the start of a slot of a span in use.  */
static inline unsigned
class_of (uintptr_t pointer)
{
  size_t offset = pointer - __memprof_slab_base;
  unsigned class = __atomic_load_n (&span_class[offset >> SLAB_SPAN_SHIFT],
                                    __ATOMIC_RELAXED);
  if (class == 0 || (offset & (MEMPROF_GRANULE_SIZE - 1)) != 0
      || slot_number (class - 1,
                      (offset & (SLAB_SPAN_BYTES - 1)) >> MEMPROF_GRANULE_SHIFT)
             < 0)
    return SLAB_CLASSES;
  return class - 1;
}

static void
report_bad_pointer (const char *what, uintptr_t pointer)
{
  static _Atomic bool reported;
  if (!atomic_exchange (&reported, true))
    log_printf ("%s (%p): not a block in use (freed twice, or not the start "
                "of a block); ignored; further such calls are not reported",
                what, (void *) pointer);
}

void
slab_free (uintptr_t pointer)
{
  /* The free's clock reading, first: its latency overlaps the checks
     and the metadata's load (clock.h).  */
  uint64_t tsc = clock_early_tsc ();
  struct slab_meta *meta = meta_of (pointer);
  struct live_block block;
  uint32_t count;

  /* A free of a slot in use races only with a wrong program (freeing it
     twice at once): the in-use bit needs no lock.  The bit alone tells a
     slot's start from any other granule of the range: only a slot's first
     granule's entry is ever written, and its size_in_use is 0 again
     before its span leaves its class (the span's slots are all free) and
     after its pages are given back; an address inside a granule would
     read its granule's entry.  So no look at the span's class and no
     division by the slot's size (class_of): the class follows from the
     size, as slab_allocate chose it.  */
  uint16_t size_in_use = meta->size_in_use;
  if (UNLIKELY ((pointer & (MEMPROF_GRANULE_SIZE - 1)) != 0
                || !(size_in_use & SLOT_IN_USE)))
    {
      report_bad_pointer ("free", pointer);
      return;
    }
  size_t size = size_in_use & ~SLOT_IN_USE;
  unsigned class = size == 0 ? 0
                             : (unsigned) ((size - 1) >> MEMPROF_GRANULE_SHIFT);
  freeing = true;
  atomic_signal_fence (memory_order_seq_cst);
  block.context = atomic_load_explicit (&meta->context, memory_order_relaxed);
  if (block.context != NULL)
    {
      block.user = pointer;
      block.size = size;
      block.alloc_timestamp = meta->alloc_timestamp;
      block.alloc_cpu = meta->alloc_cpu;
      block.weight = 1;
      /* The walk no longer sees the block.  */
      atomic_store_explicit (&meta->context, NULL, memory_order_relaxed);
      /* One reading of the clock for the peak and the MIB.  */
      struct clock_stamp stamp = clock_stamp_at (tsc);
      peak_note_free (block.context, block.size, 1, stamp.tsc);
      allocator_fold_inline (&block, stamp.ms, stamp.cpu);
    }
  meta->size_in_use = 0;
  count = cache_counts[class];
  if (UNLIKELY (count == SLAB_CACHE_SLOTS))
    {
      drain (class);
      count = cache_counts[class];
    }
  cache_slots[class][count] = pointer;
  cache_counts[class] = count + 1;
  if (UNLIKELY (cache_closed))
    caches_give_back (NULL);
  atomic_signal_fence (memory_order_seq_cst);
  freeing = false;
}

bool
slab_block (uintptr_t pointer, uint64_t *size, uint32_t *context_id)
{
  unsigned class = class_of (pointer);
  struct slab_meta *meta;
  struct depot_context *context;

  if (class == SLAB_CLASSES || !(meta_of (pointer)->size_in_use & SLOT_IN_USE))
    return false;
  meta = meta_of (pointer);
  *size = meta->size_in_use & ~SLOT_IN_USE;
  if (context_id != NULL)
    {
      context = atomic_load_explicit (&meta->context, memory_order_acquire);
      *context_id = context ? (uint32_t) context->id : 0;
    }
  return true;
}

bool
slab_for_each_live (live_block_visitor visit, void *cookie,
                    unsigned long lock_attempts)
{
  size_t used;

  if (__memprof_slab_base == SLAB_UNRESERVED)
    return true;
  /* A signal handler on a thread interrupted inside a free.  */
  if (lock_attempts != 0 && freeing)
    return false;
  used = __atomic_load_n (&spans_used, __ATOMIC_ACQUIRE);
  for (unsigned class = 0; class < SLAB_CLASSES; class ++)
    {
      size_t bytes = slot_bytes (class);
      if (!spin_lock_within (&classes[class].lock, lock_attempts))
        return false;
      for (size_t span = 0; span < used; span++)
        {
          if (__atomic_load_n (&span_class[span], __ATOMIC_ACQUIRE)
              != class + 1)
            continue;
          /* Free slots have no context.  */
          uintptr_t start = span_start (span);
          for (uintptr_t slot = start; slot + bytes <= start + SLAB_SPAN_BYTES;
               slot += bytes)
            {
              struct slab_meta *meta = meta_of (slot);
              struct depot_context *context
                  = atomic_load_explicit (&meta->context, memory_order_acquire);
              if (context != NULL)
                visit (slot, meta->size_in_use & ~SLOT_IN_USE, context,
                       meta->alloc_timestamp, meta->alloc_cpu, 1, cookie);
            }
        }
      spin_unlock (&classes[class].lock);
    }
  return true;
}

void
slab_usage (struct slab_usage *usage)
{
  memset (usage, 0, sizeof *usage);
  for (unsigned class = 0; class < SLAB_CLASSES; class ++)
    {
      spin_lock (&classes[class].lock);
      usage->cached_slots[class] = classes[class].cached;
      usage->spans_in_use += classes[class].spans_held;
      spin_unlock (&classes[class].lock);
    }
  spin_lock (&spans_lock);
  usage->spans_carved = spans_used;
  usage->spans_empty_kept = pool_committed_count;
  usage->spans_empty_given_back = pool_given_back_count;
  usage->spans_given_back_total = spans_given_back_total;
  usage->spans_kept_now = pool_keep;
  spin_unlock (&spans_lock);
}

void
slab_fork_prepare (void)
{
  spin_lock (&reserve_lock);
  for (unsigned class = 0; class < SLAB_CLASSES; class ++)
    spin_lock (&classes[class].lock);
  spin_lock (&spans_lock);
}

void
slab_fork_release (void)
{
  spin_unlock (&spans_lock);
  for (unsigned class = 0; class < SLAB_CLASSES; class ++)
    spin_unlock (&classes[class].lock);
  spin_unlock (&reserve_lock);
}
