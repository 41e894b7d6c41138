/* The malloc family, interposed.  Memory comes from glibc's own entry
   points (__libc_malloc, __libc_free), so there is no dlsym at start-up
   and no recursion.

   Layout of every block handed out:

       base (from __libc_malloc)
       | padding | header (48 bytes) | user area: SIZE bytes | slack |
                                     ^ user pointer, 64-byte aligned (or more)

   The user area starts on a granule boundary, so no two live blocks share
   a shadow counter: the bytes of a block's last granule beyond its SIZE
   hold only what no instrumented code touches (the slack, glibc's chunk
   header, the next block's padding and header), because every block of
   the heap comes from allocate_with_header () and its user area starts at
   a granule boundary after its header.  The counts folded at free are
   exactly the accesses to this block.  The chunk asked of glibc is the
   header, the worst-case padding and SIZE -- not SIZE rounded up to whole
   granules: a 20-byte block costs a 128-byte chunk (it was 192 with a
   64-byte header and whole granules); see docs/internals.md, "Block
   layout".

   With sample_interval above 1 (the sampled and always-on modes), an
   allocation that sampling leaves out is glibc's block as it is, with no
   header: free tells the two apart by the word before the pointer, which
   in a glibc chunk is its size field (a multiple of 16 with flags in
   bits 0..2, so bit 3 is never set) and in a header holds the check word,
   HEADER_TAG always set.  A glibc block may follow a recorded one in
   memory, so in these modes a recorded block's chunk does hold whole
   granules (chunk_bytes_for): its last granule stays inside its own chunk
   and the recorded blocks' counts stay exact.

   With full profiling, blocks of up to SLAB_MAX_SIZE bytes get a slot of
   the runtime's own instead (slab.c, small_slots=1): no header, metadata
   out of line; every entry point asks slab_owns () first.  */

#include "internal.h"
#include "clock.h"
#include "depot_fold.h"
#include "trace.h"
#include "events.h"
#include "small_heap.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Called through the GOT (noplt): one indirect call instead of a call to
   a PLT stub that jumps through it, on the path of every block.  */
extern void *__libc_malloc (size_t) __attribute__ ((noplt));
extern void *__libc_realloc (void *, size_t) __attribute__ ((noplt));
extern void *__libc_calloc (size_t, size_t) __attribute__ ((noplt));
extern void __libc_free (void *) __attribute__ ((noplt));

#define HEADER_SPACE 48
#define HEADER_MAGIC 0x6d656d70726f6621ULL /* "memprof!" */
/* Set in the check word, the word before the user pointer; never set in
   the size field of a glibc chunk, the word before a glibc block.  */
#define HEADER_TAG 8U
_Static_assert(HEADER_TAG == MEMPROF_HEADER_TAG, "abi.h's header tag");
/* malloc's alignment (alignof (max_align_t)): what glibc's blocks have.  */
#define PLAIN_ALIGNMENT 16
/* block_header.base_offset counts in these units (glibc's alignment).  */
#define BASE_OFFSET_UNIT 16
/* Live blocks are kept on this many lists, chosen by address.  */
#define LIVE_SHARDS 64

struct block_header
{
  struct block_header *prev, *next; /* on a live list when context != NULL */
  struct depot_context *context;    /* NULL: not recorded */
  uint64_t size : 48;               /* as requested (user space is 2^47) */
  uint64_t alloc_cpu : 16;
  uint32_t base_offset; /* (user - what __libc_malloc returned) / 16 */
  uint32_t alloc_timestamp;
  uint32_t check;  /* header_check (user pointer): HEADER_TAG set */
  uint32_t weight; /* allocations this sampled one stands for */
};

_Static_assert(sizeof (struct block_header) == HEADER_SPACE,
               "the header ends at the user pointer");
_Static_assert(offsetof (struct block_header, check) == HEADER_SPACE - 8,
               "the check word is the low half of the word before the user "
               "pointer, where a glibc chunk has its size field");
_Static_assert(HEADER_SPACE % BASE_OFFSET_UNIT == 0,
               "the user pointer stays 16-byte aligned after the header");
_Static_assert(EMERGENCY_ROOM == HEADER_SPACE,
               "the reserve's blocks have room for a header");

static struct
{
  spinlock_t lock;
  struct block_header *head;
  char padding[64 - sizeof (spinlock_t) - sizeof (void *)];
} live_shards[LIVE_SHARDS] __attribute__ ((aligned (64)));

static inline struct block_header *
header_of (uintptr_t user)
{
  return (struct block_header *) (user - HEADER_SPACE);
}

/* What a header before USER holds in its check field (HEADER_TAG set).  */
static inline uint32_t
header_check (uintptr_t user)
{
  uint64_t mixed = HEADER_MAGIC ^ user;
  return (uint32_t) (mixed ^ (mixed >> 32)) | HEADER_TAG;
}

static inline unsigned
shard_of (uintptr_t user)
{
  return (unsigned) (((user >> MEMPROF_GRANULE_SHIFT) * 0x9e3779b97f4a7c15ULL)
                     >> 58);
}

static void
live_insert (struct block_header *header, uintptr_t user)
{
  unsigned shard = shard_of (user);
  spin_lock_hot (&live_shards[shard].lock);
  header->prev = NULL;
  header->next = live_shards[shard].head;
  if (header->next != NULL)
    header->next->prev = header;
  live_shards[shard].head = header;
  spin_unlock (&live_shards[shard].lock);
}

static void
live_remove (struct block_header *header, uintptr_t user)
{
  unsigned shard = shard_of (user);
  spin_lock_hot (&live_shards[shard].lock);
  if (header->prev != NULL)
    header->prev->next = header->next;
  else
    live_shards[shard].head = header->next;
  if (header->next != NULL)
    header->next->prev = header->prev;
  spin_unlock (&live_shards[shard].lock);
}

/* fork: no list may be half-changed in the child.  */
void
allocator_fork_prepare (void)
{
  for (unsigned shard = 0; shard < LIVE_SHARDS; shard++)
    spin_lock (&live_shards[shard].lock);
  heaps_fork_prepare ();
  slab_fork_prepare ();
  small_heap_fork_prepare ();
}

void
allocator_fork_release (void)
{
  small_heap_fork_release ();
  slab_fork_release ();
  heaps_fork_release ();
  for (unsigned shard = 0; shard < LIVE_SHARDS; shard++)
    spin_unlock (&live_shards[shard].lock);
}

/* The old block of a resize in place (resize_recorded) while its free is
   told to the peak: no longer in the live set (its header may be gone),
   still live for a walk this free makes (a peak copy or a timeline
   sample), as the old block of a copy is still in the set then.  */
static __thread const struct live_block *resized_block
    __attribute__ ((tls_model ("initial-exec")));

bool
allocator_for_each_live (live_block_visitor visit, void *cookie,
                         unsigned long lock_attempts)
{
  const struct live_block *resized = resized_block;
  if (resized != NULL)
    visit (resized->user, resized->size, resized->context,
           resized->alloc_timestamp, resized->alloc_cpu, resized->weight,
           cookie);
  for (unsigned shard = 0; shard < LIVE_SHARDS; shard++)
    {
      if (!spin_lock_within (&live_shards[shard].lock, lock_attempts))
        return false;
      for (struct block_header *h = live_shards[shard].head; h != NULL;
           h = h->next)
        visit ((uintptr_t) h + HEADER_SPACE, h->size, h->context,
               h->alloc_timestamp, h->alloc_cpu, h->weight, cookie);
      spin_unlock (&live_shards[shard].lock);
    }
  return heaps_for_each_live (visit, cookie, lock_attempts)
         && slab_for_each_live (visit, cookie, lock_attempts);
}

/* ---- Sampling (sample_interval) ---- */

/* The state of this thread's random numbers.  */
static __thread uint64_t sample_random
    __attribute__ ((tls_model ("initial-exec")));

/* A uniform number in (0, 1] (xorshift64*).  */
static double
next_uniform (void)
{
  if (sample_random == 0)
    sample_random = ((uintptr_t) &sample_random * 0x9e3779b97f4a7c15ULL)
                    ^ ((uint64_t) runtime_now_ms () << 32)
                    ^ 0x2545f4914f6cdd1dULL;
  sample_random ^= sample_random >> 12;
  sample_random ^= sample_random << 25;
  sample_random ^= sample_random >> 27;
  return ((sample_random * 0x2545f4914f6cdd1dULL >> 11) + 1) * 0x1.0p-53;
}

/* Call sites (return addresses into the program) that have allocated:
   the first allocation from each is always recorded, with weight 1, so a
   site that allocates once -- a hot table, a buffer kept for the whole
   run -- is never missed by byte sampling.  The rest of a site's
   allocations are sampled; the estimate stays unbiased.  */
#define SITE_CENSUS_SIZE 4096 /* a power of two */
#define SITE_CENSUS_PROBES 8
static _Atomic uintptr_t site_census[SITE_CENSUS_SIZE];

static bool
first_allocation_at (uintptr_t site)
{
  unsigned slot = (unsigned) ((site * 0x9e3779b97f4a7c15ULL) >> 52);
  for (int probe = 0; probe < SITE_CENSUS_PROBES; probe++)
    {
      _Atomic uintptr_t *entry
          = &site_census[(slot + probe) & (SITE_CENSUS_SIZE - 1)];
      uintptr_t seen = atomic_load_explicit (entry, memory_order_relaxed);
      if (seen == site)
        return false;
      if (seen == 0)
        {
          if (atomic_compare_exchange_strong (entry, &seen, site))
            return true;
          if (seen == site)
            return false;
        }
    }
  return false; /* the census is full: sampling alone decides */
}

/* What the thread's allocations that sampling leaves out read: the bytes
   it may still allocate before the next sample, and the sites of its
   recent allocations, known to the census (two ways a set, the most
   recent first).  One variable, so that malloc's fast path finds both
   from one thread-pointer offset.  */
#define SITES_SEEN_BITS 8
#define SITES_SEEN (1U << SITES_SEEN_BITS)
/* Exported under abi.h's name: code built with direct allocation calls
   takes its countdown down at the call site (direct_calls.c); an
   executable built so defines it (weak, MEMPROF_SAMPLING_THREAD_SIZE
   bytes), and the runtime's references then find the program's.  */
MEMPROF_EXPORT __thread struct
{
  int64_t bytes_until_sample;
  uintptr_t sites_seen[SITES_SEEN / 2];   /* each set's most recent */
  uintptr_t sites_before[SITES_SEEN / 2]; /* and the one before it */
} sampling_thread __asm__(MEMPROF_SAMPLING_COUNTDOWN_NAME)
    __attribute__ ((tls_model ("initial-exec")));
_Static_assert(sizeof sampling_thread == MEMPROF_SAMPLING_THREAD_SIZE,
               "abi.h's size of the thread's sampling state");

/* SITE's set in sites_seen and sites_before.  Sites are return
   addresses a few bytes apart (binary_trees: 76 malloc calls in 6 KiB of
   code, GCC inlines `build` into itself), so the set is the address's
   bits 4 to 10: neighbouring calls take neighbouring sets, and a set
   holds two sites 2 KiB apart.  binary_trees' 76 sites then share no set
   beyond its two ways; a product hash into 256 single entries left 22 of
   them colliding (a census call on 2 % of its allocations).  Bits below
   12 do not move with the load address, so neither does this.  The two
   ways are two arrays, not pairs: GCC then reads both from the one
   thread-pointer offset (%fs:OFFSET(%reg,%set,8)); as pairs it rebuilt
   the address of the second for each call.  */
static inline unsigned
site_seen_slot (uintptr_t site)
{
  return (unsigned) (site >> 4) & (SITES_SEEN / 2 - 1);
}

/* Is SITE one of the thread's recent sites?  */
static inline bool
site_seen (uintptr_t site)
{
  unsigned set = site_seen_slot (site);
  return sampling_thread.sites_seen[set] == site
         || sampling_thread.sites_before[set] == site;
}

/* Is an allocation of SIZE bytes, made at SITE, sampled?  If so, *WEIGHT
   is the number of allocations of that size it stands for: the inverse of
   the chance that a geometric interval of mean INTERVAL bytes ends inside
   it (1 for a site's first allocation).  */
/* sample_allocation's slow path: the countdown of SIZE bytes went from
   BEFORE to 0 or below (BEFORE is 0 before the thread's first draw).  */
static __attribute__ ((noinline)) bool
sample_countdown_ended (uint64_t size, int64_t before, uint32_t *weight)
{
  double interval = (double) runtime_options.sample_interval;
  double size_bytes = size ? (double) size : 1.0;

  if (before == 0)
    {
      sampling_thread.bytes_until_sample
          = (int64_t) (-log (next_uniform ()) * interval) + 1
            - (int64_t) size_bytes;
      if (sampling_thread.bytes_until_sample > 0)
        return false;
    }
  sampling_thread.bytes_until_sample
      = (int64_t) (-log (next_uniform ()) * interval) + 1;
  double scaled = 1.0 / (1.0 - exp (-size_bytes / interval));
  if (scaled >= 4294967295.0)
    *weight = UINT32_MAX;
  else
    {
      /* Rounded at random, up with the chance of the fraction: the
         expected weight is exactly SCALED.  */
      *weight = (uint32_t) scaled;
      if (next_uniform () <= scaled - *weight)
        (*weight)++;
    }
  return true;
}

static inline bool
sample_allocation (uint64_t size, uintptr_t site, uint32_t *weight)
{
  *weight = 1;
  if (runtime_options.sample_interval <= 1)
    return true;
  /* A loop allocating at a few sites asks the census once for each.  */
  if (!site_seen (site))
    {
      unsigned set = site_seen_slot (site);
      bool first = first_allocation_at (site);
      sampling_thread.sites_before[set] = sampling_thread.sites_seen[set];
      sampling_thread.sites_seen[set] = site;
      if (first)
        return true;
    }
  /* Integers only on the way of an allocation left out.  */
  int64_t before = sampling_thread.bytes_until_sample;
  sampling_thread.bytes_until_sample = before
                                       - (size == 0          ? 1
                                          : size > INT64_MAX ? INT64_MAX
                                                             : (int64_t) size);
  if (LIKELY (before != 0 && sampling_thread.bytes_until_sample > 0))
    return false;
  return sample_countdown_ended (size, before, weight);
}

/* The context of a sampled allocation made by the caller returning to
   CALLER_RETURN.  */
static struct depot_context *
capture_sampled (uintptr_t caller_return)
{
  struct depot_context *context;
  in_runtime++;
  context
      = context_capture ((int) runtime_options.max_stack_depth, caller_return);
  in_runtime--;
  return context;
}

/* The context of an allocation of SIZE bytes made by the caller returning
   to CALLER_RETURN, and in *WEIGHT the allocations it stands for; NULL
   when it is not recorded (the runtime is not running, or it is too early
   to start it (runtime_too_early), or the runtime is the caller,
   profile=0, or sampling leaves it out).  For malloc's blocks and the
   heaps' (heaps.c).  */
struct depot_context *
allocator_capture_context (uint64_t size, uintptr_t caller_return,
                           uint32_t *weight)
{
  if (UNLIKELY (runtime_state != RUNTIME_RUNNING))
    {
      runtime_ensure_initialized ();
      if (runtime_state != RUNTIME_RUNNING)
        {
          if (runtime_too_early ())
            atomic_fetch_add_explicit (&runtime_allocations_too_early, 1,
                                       memory_order_relaxed);
          return NULL;
        }
    }
  if (in_runtime || (!runtime_options.profile && !trace_with_stacks)
      || !sample_allocation (size, caller_return, weight))
    return NULL;
  return capture_sampled (caller_return);
}

/* Sampling's verdict on an allocation of SIZE bytes at SITE made before
   the block is: false when sampling leaves it out (the block is then
   glibc's own, headerless); true, with *WEIGHT, when it is recorded.
   *WEIGHT is 0 when nothing was decided (no sampling, the runtime not
   running or busy): the header's path decides, as before.  */
static inline bool
sampling_keeps (uint64_t size, uintptr_t site, uint32_t *weight)
{
  *weight = 0;
  if (runtime_options.sample_interval <= 1
      || UNLIKELY (runtime_state != RUNTIME_RUNNING) || in_runtime
      || (!runtime_options.profile && !trace_with_stacks))
    return true;
  return sample_allocation (size, site, weight);
}

/* Record the allocation at USER (its header is filled in except for the
   context fields), made by the caller returning to CALLER_RETURN; WEIGHT
   when sampling_keeps has chosen it, 0 when nothing is decided yet.  */
static void
record_allocation (struct block_header *header, uintptr_t user,
                   uintptr_t caller_return, uint32_t weight)
{
  /* Read once, before alloc_cpu is stored: a 16-bit store into the word
     that holds the size, read back whole, stalls until the store is done
     (store forwarding fails; 4 % of a full-profiling pair).  */
  uint64_t size = header->size;
  if (weight != 0)
    {
      header->weight = weight;
      header->context = capture_sampled (caller_return);
    }
  else
    header->context
        = allocator_capture_context (size, caller_return, &header->weight);
  if (header->context == NULL)
    return;
  struct clock_stamp stamp = clock_stamp ();
  header->alloc_timestamp = stamp.ms;
  header->alloc_cpu = stamp.cpu;
  shadow_clear (user, granules_for (size));
  peak_note_allocation (header->context, size, header->weight, stamp.tsc);
  live_insert (header, user);
}

/* Fold the block BLOCK freed at NOW on CPU into its context: its shadow
   counters (and histogram, with ENTRIES of them), its MIB and its
   side-file counts.  */
static inline void
fold_block (const struct live_block *block, uint64_t *histogram,
            uint32_t entries, uint32_t now, uint32_t cpu)
{
  struct memprof_mib mib;
  struct context_extra extra;
  uint64_t touched_counters;
  uint64_t accesses;
  if (entries == 0)
    {
      accesses = collect_counters (block, &touched_counters);
      depot_fold_block (block, accesses, touched_counters, now, cpu);
      return;
    }
  accesses = shadow_collect (block->user, granules_for (block->size), true,
                             &touched_counters, histogram, entries);
  mib_init_one (&mib, block->size, accesses, block->alloc_timestamp, now,
                block->alloc_cpu, cpu);
  mib_scale (&mib, block->weight);
  mib.access_histogram_size = entries;
  context_extra_init_one (&extra, block->size, accesses, touched_counters,
                          shadow_granule_size (), block->weight);
  depot_fold (block->context, &mib, histogram, &extra);
}

/* Histogram entries of a freed block kept on the stack; larger
   histograms get private pages for the moment of the fold.  */
#define HISTOGRAM_ON_STACK 256

/* fold_block in histogram mode, out of the common path (its buffer is
   2 KiB of stack); see depot_fold.h.  */
__attribute__ ((noinline)) void
allocator_fold_with_histogram (const struct live_block *block, uint32_t now,
                               uint32_t cpu)
{
  uint64_t on_stack[HISTOGRAM_ON_STACK];
  uint32_t entries = histogram_entries_for (block->size);
  uint64_t *histogram = on_stack;

  if (entries > HISTOGRAM_ON_STACK)
    {
      histogram = runtime_map (entries * sizeof (uint64_t));
      if (histogram == NULL)
        entries = 0;
    }
  fold_block (block, histogram, entries, now, cpu);
  if (histogram != NULL && histogram != on_stack)
    runtime_unmap (histogram, entries * sizeof (uint64_t));
}

/* Fold a block freed at NOW on CPU into its context, its counters
   cleared.  */
void
allocator_fold_freed_at (const struct live_block *block, uint32_t now,
                         uint32_t cpu)
{
  allocator_fold_inline (block, now, cpu);
}

/* Fold the block at USER into its context and forget it.  */
static void
record_free (struct block_header *header, uintptr_t user)
{
  struct live_block block = { user,
                              header->size,
                              header->context,
                              header->alloc_timestamp,
                              header->alloc_cpu,
                              header->weight };
  /* One reading of the clock for the peak and the MIB.  */
  struct clock_stamp stamp = clock_stamp ();
  peak_note_free (header->context, header->size, header->weight, stamp.tsc);
  live_remove (header, user);
  allocator_fold_inline (&block, stamp.ms, stamp.cpu);
}

/* The bytes of glibc memory a block of SIZE bytes aligned to ALIGNMENT
   (a power of two, at least 64) needs: glibc returns 16-byte aligned
   memory, so at most ALIGNMENT - 16 bytes of padding after the header
   bring the user pointer to its alignment.  With sample_interval above
   1, glibc's own blocks (the ones sampling leaves out) may follow this
   one, so the block holds whole granules (see the layout above).  0 when
   it does not fit in a size_t or in the header's fields.  */
static size_t
chunk_bytes_for (size_t size, size_t alignment)
{
  size_t total = HEADER_SPACE + (alignment - 16) + size;
  if (runtime_options.sample_interval > 1)
    total += (MEMPROF_GRANULE_SIZE - size % MEMPROF_GRANULE_SIZE)
             % MEMPROF_GRANULE_SIZE;
  if (total < size || (alignment + HEADER_SPACE) / BASE_OFFSET_UNIT > UINT32_MAX
      || size >= (1ULL << 48))
    return 0;
  return total;
}

/* Allocate SIZE bytes aligned to ALIGNMENT (a power of two, at least 64
   is used), recorded as made by the caller returning to CALLER_RETURN;
   WEIGHT as record_allocation takes it.  */
static void *
allocate_with_header (size_t size, size_t alignment, uintptr_t caller_return,
                      uint32_t weight)
{
  size_t total;
  uintptr_t base, user;
  struct block_header *header;

  if (alignment < MEMPROF_GRANULE_SIZE)
    alignment = MEMPROF_GRANULE_SIZE;
  total = chunk_bytes_for (size, alignment);
  if (UNLIKELY (total == 0))
    {
      errno = ENOMEM;
      return NULL;
    }
  base = (uintptr_t) __libc_malloc (total);
  if (UNLIKELY (base == 0))
    return NULL;
  user = ROUND_UP (base + HEADER_SPACE, alignment);
  header = header_of (user);
  header->base_offset = (uint32_t) ((user - base) / BASE_OFFSET_UNIT);
  header->size = size;
  header->check = header_check (user);
  record_allocation (header, user, caller_return, weight);
  hooks_after_allocation ((void *) user, size);
  if (events_allocations_wanted ())
    events_record_allocation (
        user, size, header->context ? header->context->id : 0, caller_return);
  return (void *) user;
}

/* glibc's own block for an allocation that sampling leaves out.  */
static void *
allocate_plain (size_t size)
{
  void *pointer = __libc_malloc (size);
  if (pointer != NULL)
    hooks_after_allocation (pointer, size);
  return pointer;
}

/* What the unsampled path asks, in one byte on one cache line (it read
   six flags on five lines: malloc+free of a small block costs about 15 ns
   natively, and each line the program's data evicts shows): bit
   UNWATCHED, nobody watches the malloc family beyond the profile (no
   hooks, no events module, no trace), so that a block sampling left out
   is freed as glibc's; with bit SAMPLING too, malloc may leave an
   allocation out without asking anything else (the runtime runs,
   sample_interval is above 1, and a profile or a trace with stacks is
   kept).  Recomputed by allocator_observers_changed () whenever one of
   those changes; 0 (the slow path, which decides everything as before)
   until the runtime runs.  The bits are in internal.h: new_delete.c
   reads them too.  */
_Atomic unsigned char __memprof_unsampled_path
    __attribute__ ((aligned (MEMPROF_GRANULE_SIZE)));
static spinlock_t unsampled_path_lock;
/* The flags have opened without the small heap: it is never used.  */
static bool small_heap_refused;

void
allocator_observers_changed (void)
{
  spin_lock (&unsampled_path_lock);
  unsigned char value = 0;
  if (!atomic_load (&hooks_count) && !atomic_load (&events_want_allocations)
      && !atomic_load (&trace_watched))
    value |= UNSAMPLED_UNWATCHED;
  if (runtime_options.sample_interval > 1
      && atomic_load (&runtime_state) == RUNTIME_RUNNING
      && (runtime_options.profile || trace_with_stacks))
    value |= UNSAMPLED_SAMPLING;
  /* Reserved the first time the flags open, never later: a direct
     allocation call's site marked before would hand the small heap's
     blocks to glibc's free (direct_calls.c marks none with this bit).  */
  if (value == UNSAMPLED_OPEN && runtime_options.small_heap
      && !small_heap_refused && small_heap_reserve ())
    value |= UNSAMPLED_SMALL_HEAP;
  else if (value == UNSAMPLED_OPEN)
    small_heap_refused = true;
  atomic_store (&__memprof_unsampled_path, value);
  direct_calls_observers_changed (value);
  spin_unlock (&unsampled_path_lock);
}

/* Is nobody watching the malloc family beyond the profile: no hooks, no
   events, no trace?  Then a block that sampling leaves out needs no more
   than glibc's own call (the always-on mode's path).  */
static inline bool
no_observers (void)
{
  return atomic_load_explicit (&__memprof_unsampled_path, memory_order_relaxed)
         & UNSAMPLED_UNWATCHED;
}

/* Take BYTES off the thread's countdown; true, with the countdown as it
   was, when that would end it (it was BYTES or less, as unsigned).  One
   subtraction on the thread's word whose flags decide (sub, jbe): GCC
   writes a load, a compare, a branch, a subtraction and a store.  */
static inline bool
countdown_ends (uint64_t bytes)
{
  bool ended;
#if defined(__x86_64__)
  __asm__("subq %[bytes], %[countdown]"
          : [countdown] "+m"(sampling_thread.bytes_until_sample),
            "=@ccbe"(ended)
          : [bytes] "r"(bytes));
#else
  ended = (uint64_t) sampling_thread.bytes_until_sample <= bytes;
  sampling_thread.bytes_until_sample -= (int64_t) bytes;
#endif
  if (UNLIKELY (ended))
    {
      /* A signal handler's malloc between the subtraction and this line
         found the countdown below zero and took its own bytes off it:
         never leave it negative (read as unsigned, a huge countdown
         would end sampling on this thread); 0 draws a new one.  */
      int64_t restored = sampling_thread.bytes_until_sample + (int64_t) bytes;
      sampling_thread.bytes_until_sample = restored < 0 ? 0 : restored;
      return true;
    }
  return false;
}

/* The always-on mode's common case, in as few instructions as it takes
   (a native malloc+free pair costs about 15 ns, so each one shows): is
   the allocation of SIZE at SITE one that sampling leaves out, decided
   without the census or the end of the countdown, with nobody watching?
   Then the countdown is taken down as sample_allocation would.  Any
   other case is malloc_at's, which decides it as before.

   in_runtime is not asked (4 instructions an allocation): the runtime's
   own allocations made while it is set (libunwind, dl_iterate_phdr,
   stdio when the profile is written) come from call sites in the C
   library or the runtime; where such a site is also in the thread's
   table (the program called the same function), the allocation takes
   glibc's block here and the countdown is taken down by its size, as
   the program's own would be.  It is never recorded: the fast path
   records nothing, and an allocation that would end the countdown goes
   to malloc_at, whose sampling_keeps sees in_runtime as before.  */
static inline bool
malloc_left_out_quickly (size_t size, uintptr_t site)
{
  if ((atomic_load_explicit (&__memprof_unsampled_path, memory_order_relaxed)
       | UNSAMPLED_SMALL_HEAP)
          != (UNSAMPLED_OPEN | UNSAMPLED_SMALL_HEAP)
      || !site_seen (site))
    return false;
  /* bytes_until_sample is never negative here; a SIZE above it (or one
     above INT64_MAX) ends the countdown: malloc_at's.  */
  uint64_t bytes = size ? size : 1;
  return !countdown_ends (bytes);
}

/* The calls of a section's own (below, "Entries while the thread is
   inside the runtime"): never glibc's allocator.  */
static void *reentered_allocate (size_t size, size_t alignment);
static void reentered_free (void *pointer);
static void *reentered_reallocate (void *pointer, size_t size);

/* glibc's malloc, calloc, realloc and free of the paths that decide
   before any section (the always-on mode's, free's of glibc's block):
   the reserve's inside one, where the call is a signal handler's (or the
   runtime's own) and the section it interrupted may be inside glibc's.
   One test of the thread's flag; the common case is a tail call.  */
static inline __attribute__ ((always_inline)) void *
glibc_malloc_outside_sections (size_t size)
{
  if (UNLIKELY (runtime_entered))
    return reentered_allocate (size, PLAIN_ALIGNMENT);
  return __libc_malloc (size);
}

static inline __attribute__ ((always_inline)) void *
glibc_calloc_outside_sections (size_t count, size_t size)
{
  if (UNLIKELY (runtime_entered))
    {
      /* COUNT * SIZE does not overflow: the callers checked.  */
      void *block = reentered_allocate (count * size, PLAIN_ALIGNMENT);
      if (block != NULL)
        memset (block, 0, count * size);
      return block;
    }
  return __libc_calloc (count, size);
}

static inline __attribute__ ((always_inline)) void *
glibc_realloc_outside_sections (void *pointer, size_t size)
{
  if (UNLIKELY (runtime_entered))
    return reentered_reallocate (pointer, size);
  return __libc_realloc (pointer, size);
}

static inline __attribute__ ((always_inline)) void
glibc_free_outside_sections (void *pointer)
{
  if (UNLIKELY (runtime_entered))
    reentered_free (pointer);
  else
    __libc_free (pointer);
}

/* The always-on mode's path with the small heap (small_heap.c): true,
   with the block in *RESULT, when the allocation of SIZE at SITE is one
   that sampling leaves out, decided as malloc_left_out_quickly decides;
   the block is the small heap's when SIZE is small enough (glibc's when
   its range is used up), glibc's otherwise.  False when the flags are
   not UNSAMPLED_OPEN with the small heap, or sampling has to decide: the
   caller's own path then.  */
static inline __attribute__ ((always_inline)) bool
small_left_out_quickly (size_t size, uintptr_t site, void **result)
{
  if (atomic_load_explicit (&__memprof_unsampled_path, memory_order_relaxed)
          != (UNSAMPLED_OPEN | UNSAMPLED_SMALL_HEAP)
      || !site_seen (site))
    return false;
  uint64_t bytes = size ? size : 1;
  if (countdown_ends (bytes))
    return false;
  if (LIKELY (bytes <= SMALL_HEAP_MAX))
    {
      void *block = small_heap_allocate (small_heap_class_for (bytes));
      if (LIKELY (block != NULL))
        {
          *result = block;
          return true;
        }
    }
  *result = glibc_malloc_outside_sections (size);
  return true;
}

/* allocate_with_header, or glibc's block when ALIGNMENT is malloc's and
   sampling leaves the allocation out.  Inline in its callers: a call of
   its own on the way to every slot cost 29 instructions a malloc.  */
static inline __attribute__ ((always_inline)) void *
allocate (size_t size, size_t alignment, uintptr_t caller_return)
{
  uint32_t weight = 0;
  if (slab_takes (size, alignment))
    {
      void *slot = slab_allocate (size, caller_return);
      if (LIKELY (slot != NULL))
        return slot;
    }
  if (alignment <= PLAIN_ALIGNMENT
      && malloc_left_out_quickly (size, caller_return))
    return __libc_malloc (size);
  if (alignment <= PLAIN_ALIGNMENT
      && !sampling_keeps (size, caller_return, &weight))
    return allocate_plain (size);
  return allocate_with_header (size, alignment, caller_return, weight);
}

/* The usable size of glibc's block POINTER, from its chunk's size field
   (as glibc's malloc_usable_size: the chunk less its size field, less
   the whole chunk header when it was mapped on its own).  */
static size_t
plain_usable_size (void *pointer)
{
  uint64_t field = ((const uint64_t *) pointer)[-1];
  return (field & ~7ULL) - ((field & 2) ? 16 : 8);
}

/* The header of USER, or NULL when USER did not come from
   allocate_with_header () (a slot's block is not).  */
static struct block_header *
checked_header (void *pointer)
{
  uintptr_t user = (uintptr_t) pointer;
  struct block_header *header;

  if ((user & (MEMPROF_GRANULE_SIZE - 1)) != 0 || slab_owns (pointer)
      || small_heap_owns (pointer)
      || !(((const uint64_t *) user)[-1] & HEADER_TAG))
    return NULL;
  header = header_of (user);
  return header->check == header_check (user) ? header : NULL;
}

/* Is HEADER's block one of the reserve's (reserve_block), not of
   glibc's memory?  Its base_offset is 0: a block in glibc's chunk has
   its header HEADER_SPACE bytes or more after the chunk's start.  */
static inline bool
is_reserve_block (const struct block_header *header)
{
  return header->base_offset == 0;
}

/* Is POINTER (not NULL) surely glibc's own block: not a slot's and
   without HEADER_TAG in the word before it (a slot's block has no header
   and the word before it is the previous slot's, or not mapped at all
   for the range's first slot: slab_owns is asked first; see the layout
   above)?  Not a test of the block's alignment first (a recorded block
   is 64-byte aligned): which glibc blocks are aligned is data, a branch
   mispredicted on every other free of binary_trees' 32-byte chunks; the
   word before a block that is not aligned is on the block's own line,
   and glibc's free reads it next.  */
static inline bool
surely_plain (const void *pointer)
{
  return !slab_owns (pointer) && !small_heap_owns (pointer)
         && !(((const uint64_t *) pointer)[-1] & HEADER_TAG);
}

static void
deallocate (void *pointer)
{
  struct block_header *header;

  if (pointer == NULL)
    return;
  if (LIKELY (no_observers ()) && surely_plain (pointer))
    {
      __libc_free (pointer);
      return;
    }
  hooks_before_free (pointer);
  events_before_free (pointer);
  if (slab_owns (pointer))
    {
      slab_free ((uintptr_t) pointer);
      return;
    }
  if (small_heap_owns (pointer))
    {
      small_heap_free (pointer);
      return;
    }
  header = checked_header (pointer);
  if (UNLIKELY (header == NULL))
    {
      /* Not ours (memory from before interposition, or a bad pointer):
         glibc decides.  */
      __libc_free (pointer);
      return;
    }
  if (header->context != NULL)
    record_free (header, (uintptr_t) pointer);
  header->check = 0;
  if (UNLIKELY (is_reserve_block (header)))
    {
      emergency_free (pointer);
      return;
    }
  __libc_free ((void *) ((uintptr_t) pointer
                         - (uintptr_t) header->base_offset * BASE_OFFSET_UNIT));
}

/* The size asked for: the bytes after it may hold the next block's
   header (see the layout above).  */
static size_t
usable_size (void *pointer)
{
  struct block_header *header;
  uint64_t slot_size;
  if (pointer == NULL)
    return 0;
  if (slab_owns (pointer))
    return slab_block ((uintptr_t) pointer, &slot_size, NULL) ? slot_size : 0;
  if (small_heap_owns (pointer))
    return small_heap_size_of (pointer);
  header = checked_header (pointer);
  if (header == NULL)
    /* glibc's (sampling left it out, or from before interposition).  */
    return plain_usable_size (pointer);
  return header->size;
}

/* realloc of the recorded block POINTER (HEADER before it, a block of
   malloc's alignment) to SIZE bytes, with nobody watching the malloc
   family: in the block's own chunk, resized by glibc's realloc, which
   grows it in place where it can (a chunk at the top of the heap, a
   mapped chunk by mremap) or copies it.  A fresh block, a copy and a free
   of the old one instead (reallocate's other ways) touch new pages on
   every growth of a block too large for glibc's bins (cjson_parse's print
   buffer, doubled up to half a megabyte, so sampled more often than not
   at sample_interval=524288: 7 times the plain build's page faults).

   The profile is the one the other ways give: the same sampling decision
   for the new block, which is recorded (at the first granule boundary
   after HEADER_SPACE in the resized chunk, its bytes moved there if
   glibc left them elsewhere) before the old one is freed, both at one
   clock reading.  Nothing changes until glibc's realloc has succeeded:
   when it fails, the old block stays recorded as it was (in the live
   set, its counters intact, not folded).  So the old block's counters
   are read before the call without being cleared, and folded after it;
   its shard of the live set is held locked across the call, its links
   read before it, so that it leaves the set only on success, without a
   read of its header after glibc may have given the old chunk to another
   thread (nothing here reads or writes the old range after the call).
   A moved chunk's old counters are not cleared (they may already be
   another block's): every recorded allocation clears its own granules
   (record_allocation, heaps.c, slab.c; the histogram's too), and a
   block sampling leaves out is never read.  Only stats=1's sum of the
   whole shadow would see them: reallocate does not come here then, nor
   with the histogram (its fold reads the counters into a buffer of its
   own), nor for a block of a larger alignment (its bytes may lie beyond
   the new chunk's size).  */
static void *
resize_recorded (void *pointer, struct block_header *header, size_t size,
                 uintptr_t caller_return)
{
  uintptr_t user = (uintptr_t) pointer;
  size_t offset = (size_t) header->base_offset * BASE_OFFSET_UNIT;
  void *base = (void *) (user - offset);
  size_t kept = header->size < size ? header->size : size;
  uint32_t weight = 0;
  bool recorded = !malloc_left_out_quickly (size, caller_return)
                  && sampling_keeps (size, caller_return, &weight);
  size_t total
      = recorded ? chunk_bytes_for (size, MEMPROF_GRANULE_SIZE) : offset + size;
  if (UNLIKELY ((recorded && total == 0) || total < size))
    {
      errno = ENOMEM;
      return NULL;
    }
  struct live_block old = { user,
                            header->size,
                            header->context,
                            header->alloc_timestamp,
                            header->alloc_cpu,
                            header->weight };
  uint32_t check = header->check;
  /* What record_free reads: the counters, not cleared.  */
  bool fold = old.context != NULL && LIKELY (runtime_state == RUNTIME_RUNNING)
              && !in_runtime;
  uint64_t accesses = 0, touched_counters = 0;
  if (fold)
    accesses = shadow_collect (user, granules_for (old.size), false,
                               &touched_counters, NULL, 0);
  unsigned shard = shard_of (user);
  struct block_header *prev = NULL, *next = NULL;
  /* The thread's signals are blocked until the end: a handler that
     allocates or frees on this thread (glibc's realloc of a mapped chunk,
     mremap, holds no lock of glibc's) would wait forever for the shard
     held across the call, or for the live set or a context this thread
     holds in the peak's walk or the fold below.  */
  sigset_t saved_mask, all;
  sigfillset (&all);
  pthread_sigmask (SIG_SETMASK, &all, &saved_mask);
  if (old.context != NULL)
    {
      /* Held until the block has left the set: its links stay what is
         read here (no insertion or removal in this shard meanwhile).  */
      spin_lock_hot (&live_shards[shard].lock);
      prev = header->prev;
      next = header->next;
    }
  /* A header no longer: the old range may be handed out by glibc as it
     is, or the chunk kept for a block sampling leaves out.  */
  header->check = 0;
  uintptr_t fresh_base = (uintptr_t) __libc_realloc (base, total);
  if (UNLIKELY (fresh_base == 0))
    {
      /* glibc left the block as it was: so is its record.  */
      header->check = check;
      if (old.context != NULL)
        spin_unlock (&live_shards[shard].lock);
      int saved_errno = errno;
      pthread_sigmask (SIG_SETMASK, &saved_mask, NULL);
      errno = saved_errno;
      return NULL;
    }
  if (old.context != NULL)
    {
      /* live_remove with the links read before the call.  */
      if (prev != NULL)
        prev->next = next;
      else
        live_shards[shard].head = next;
      if (next != NULL)
        next->prev = prev;
      spin_unlock (&live_shards[shard].lock);
    }
  /* Where glibc left the bytes: at OFFSET in the chunk, moved or not.  */
  uintptr_t bytes = fresh_base + offset;
  uintptr_t fresh
      = recorded ? ROUND_UP (fresh_base + HEADER_SPACE, MEMPROF_GRANULE_SIZE)
                 : fresh_base;
  if (fresh != bytes)
    memmove ((void *) fresh, (void *) bytes, kept);
  if (recorded)
    {
      struct block_header *fresh_header = header_of (fresh);
      fresh_header->base_offset
          = (uint32_t) ((fresh - fresh_base) / BASE_OFFSET_UNIT);
      fresh_header->size = size;
      fresh_header->check = header_check (fresh);
      record_allocation (fresh_header, fresh, caller_return, weight);
    }
  /* record_free's peak and fold of the old block, after the new one's
     allocation as in the other ways; a walk of the live blocks that the
     peak makes at this free still finds the old block (resized_block).  */
  if (old.context != NULL)
    {
      struct clock_stamp stamp = clock_stamp ();
      resized_block = &old;
      peak_note_free (old.context, old.size, old.weight, stamp.tsc);
      resized_block = NULL;
      if (fold)
        {
          in_runtime++;
          depot_fold_inline (&old, accesses, touched_counters, stamp.ms,
                             stamp.cpu);
          in_runtime--;
        }
    }
  pthread_sigmask (SIG_SETMASK, &saved_mask, NULL);
  return (void *) fresh;
}

/* The least size, old or new, a block is resized in its own chunk at:
   the resize blocks the thread's signals (two system calls), which a
   smaller block's copy costs less than, and glibc grows in place (the
   heap's top, mremap) the large blocks whose copies touch fresh pages.  */
#define RESIZE_IN_PLACE_MIN_BYTES (64 * 1024)

/* May reallocate resize the recorded block HEADER to SIZE bytes in its
   own chunk (resize_recorded)?  */
static inline bool
resizes_in_place (const struct block_header *header, size_t size)
{
  return (size >= RESIZE_IN_PLACE_MIN_BYTES
          || header->size >= RESIZE_IN_PLACE_MIN_BYTES)
         && !is_reserve_block (header) && no_observers ()
         && !slab_takes (size, PLAIN_ALIGNMENT) && !runtime_histogram
         && !stats_enabled
         && (size_t) header->base_offset * BASE_OFFSET_UNIT
                <= HEADER_SPACE + MEMPROF_GRANULE_SIZE - PLAIN_ALIGNMENT;
}

static void *
reallocate (void *pointer, size_t size, uintptr_t caller_return)
{
  struct block_header *header;
  void *fresh;
  size_t old_size;

  if (pointer == NULL)
    return allocate (size, PLAIN_ALIGNMENT, caller_return);
  if (size == 0)
    {
      /* glibc's rule: realloc (p, 0) frees p and returns NULL.  */
      deallocate (pointer);
      return NULL;
    }
  header = checked_header (pointer);
  /* One clock reading for the new block's allocation and the old one's
     free (clock_hold_begin; ended below).  */
  if (slab_owns (pointer) || small_heap_owns (pointer))
    {
      old_size = usable_size (pointer);
      clock_hold_begin (old_size < size ? old_size : size);
      fresh = allocate (size, PLAIN_ALIGNMENT, caller_return);
    }
  else if (header != NULL)
    {
      old_size = header->size;
      clock_hold_begin (old_size < size ? old_size : size);
      if (resizes_in_place (header, size))
        {
          fresh = resize_recorded (pointer, header, size, caller_return);
          clock_hold_end ();
          return fresh;
        }
      fresh = allocate (size, PLAIN_ALIGNMENT, caller_return);
    }
  else
    {
      /* glibc's block (sampling left it out, or from before
         interposition): glibc's realloc unless sampling keeps the new
         one.  */
      uint32_t weight;
      if (!sampling_keeps (size, caller_return, &weight) || weight == 0)
        return __libc_realloc (pointer, size);
      old_size = plain_usable_size (pointer);
      fresh
          = allocate_with_header (size, PLAIN_ALIGNMENT, caller_return, weight);
    }
  if (fresh != NULL)
    {
      memcpy (fresh, pointer, old_size < size ? old_size : size);
      deallocate (pointer);
    }
  clock_hold_end ();
  return fresh;
}

static bool
is_power_of_two (size_t value)
{
  return value != 0 && (value & (value - 1)) == 0;
}

/* ---- Entries while the thread is inside the runtime ---- */

/* See internal.h.  The runtime's locks are taken by the thread that runs
   a section, and while the process has one thread by a plain store
   (spin_lock_hot): a handler on that thread that waited for one would
   wait forever, and one that changed the thread's cache of slots (a
   pop, a push) between the interrupted section's load and store would
   hand a slot out twice.  So a handler's call that finds the thread in a
   section touches nothing of the runtime's locked state.  Nor does it
   touch glibc's allocator: the section may be inside it (a header's
   chunk, a sampled block, a block past the small heap), and glibc's
   malloc is not re-entrant (emergency.c says why its per-thread cache
   does not save the handler).  So its blocks are the reserve's
   (emergency.c), each with a header that says so (reserve_block), freed
   from any context later (deallocate, usable_size and reallocate know
   them by their header); its frees of reserve blocks are made at once,
   and its frees of any other block, glibc's included, wait here.  */
__thread bool runtime_entered __attribute__ ((tls_model ("initial-exec")));
__thread void *runtime_deferred_frees
    __attribute__ ((tls_model ("initial-exec")));
_Atomic uint64_t runtime_allocations_reentered;
_Atomic uint64_t runtime_frees_deferred;

/* Count an allocation made inside a section (stats=1): a handler's, not
   the runtime's own (in_runtime: libunwind's, stdio's while a profile is
   written), which were never recorded.  */
static inline void
count_reentered_allocation (void)
{
  if (!in_runtime)
    atomic_fetch_add_explicit (&runtime_allocations_reentered, 1,
                               memory_order_relaxed);
}

/* A block of SIZE bytes aligned to ALIGNMENT from the reserve, with a
   header (not recorded; is_reserve_block), or NULL with errno.  */
static void *
reserve_block (size_t size, size_t alignment)
{
  void *pointer
      = size < (1ULL << 48) ? emergency_allocate (size, alignment) : NULL;
  if (UNLIKELY (pointer == NULL))
    {
      errno = ENOMEM;
      return NULL;
    }
  uintptr_t user = (uintptr_t) pointer;
  struct block_header *header = header_of (user);
  header->prev = header->next = NULL;
  header->context = NULL;
  header->size = size;
  header->alloc_cpu = 0;
  header->base_offset = 0;
  header->alloc_timestamp = 0;
  header->weight = 0;
  header->check = header_check (user);
  return pointer;
}

/* An allocation of SIZE bytes aligned to ALIGNMENT made inside a
   section: the reserve's block.  */
static __attribute__ ((noinline)) void *
reentered_allocate (size_t size, size_t alignment)
{
  count_reentered_allocation ();
  return reserve_block (size, alignment);
}

void
runtime_defer_free (void *pointer)
{
  /* A handler of another signal may push meanwhile: the exchange is one
     instruction, whole for the thread's handlers.  */
  void *head = __atomic_load_n (&runtime_deferred_frees, __ATOMIC_RELAXED);
  do
    *(void **) pointer = head;
  while (!__atomic_compare_exchange_n (&runtime_deferred_frees, &head, pointer,
                                       true, __ATOMIC_RELAXED,
                                       __ATOMIC_RELAXED));
  atomic_fetch_add_explicit (&runtime_frees_deferred, 1, memory_order_relaxed);
}

/* A free made inside a section: a reserve block goes back at once, any
   other (glibc's too: the section may be inside glibc's free) waits for
   the section's end, and is then freed as the program's free, folded,
   traced and shown to the hooks.  Every block has room for the link: a
   slot has 64 bytes, a small heap block 16, a header's chunk at least 8
   after the user pointer, glibc's smallest 24.  */
static __attribute__ ((noinline)) void
reentered_free (void *pointer)
{
  if (pointer == NULL)
    return;
  struct block_header *header = checked_header (pointer);
  if (header != NULL && is_reserve_block (header))
    {
      header->check = 0;
      emergency_free (pointer);
    }
  else
    runtime_defer_free (pointer);
}

void
runtime_free_deferred (void)
{
  /* Taken whole: a handler's push meanwhile starts a new list.  */
  void *block
      = __atomic_exchange_n (&runtime_deferred_frees, NULL, __ATOMIC_RELAXED);
  while (block != NULL)
    {
      void *next = *(void **) block;
      free (block);
      block = next;
    }
}

/* realloc inside a section: a fresh reserve block, the bytes copied,
   the old block freed as reentered_free frees it.  */
static __attribute__ ((noinline)) void *
reentered_reallocate (void *pointer, size_t size)
{
  if (pointer == NULL)
    return reentered_allocate (size, PLAIN_ALIGNMENT);
  if (size == 0)
    {
      reentered_free (pointer);
      return NULL;
    }
  size_t old_size = usable_size (pointer);
  void *fresh = reentered_allocate (size, PLAIN_ALIGNMENT);
  if (fresh != NULL)
    {
      memcpy (fresh, pointer, old_size < size ? old_size : size);
      reentered_free (pointer);
    }
  return fresh;
}

/* ---- The interposed entry points ---- */

#define CALLER ((uintptr_t) __builtin_return_address (0))

/* The trace (trace.h): an allocation is recorded after it returns, a
   deallocation before it starts, so that the trace's order never has an
   address handed out twice.  */
void
allocator_trace_allocation (unsigned op, unsigned flags, uint64_t size,
                            uint64_t extra, void *result, uint64_t pointer)
{
  struct block_header *header = result ? checked_header (result) : NULL;
  uint64_t slot_size;
  uint32_t slot_context;
  if (result != NULL && slab_owns (result)
      && slab_block ((uintptr_t) result, &slot_size, &slot_context))
    {
      trace_append (op, flags, pointer, (uintptr_t) result, size, extra,
                    slot_size, slot_context);
      return;
    }
  trace_append (op, flags, pointer, (uintptr_t) result, size, extra,
                header ? usable_size (result) : 0,
                header && header->context ? (uint32_t) header->context->id : 0);
}

/* An allocation of SIZE bytes aligned to ALIGNMENT at SITE in a section
   of its own, traced as OP of TRACED_SIZE bytes with EXTRA; the
   reserve's block when the thread is in a section already.  Inline in
   the entry points: the stack's entry frame (STACK_ENTRY_BEGIN) is
   theirs.  */
static inline __attribute__ ((always_inline)) void *
allocate_in_section (size_t size, size_t alignment, uintptr_t site, unsigned op,
                     uint64_t traced_size, uint64_t extra)
{
  if (!entry_begin ())
    return reentered_allocate (size, alignment);
  STACK_ENTRY_BEGIN ();
  void *result = allocate (size, alignment, site);
  STACK_ENTRY_END ();
  TRACE_ALLOCATION (op, 0, traced_size, extra, result);
  entry_end ();
  return result;
}

/* malloc's own path for an allocation of SIZE at SITE that
   malloc_left_out_quickly did not decide.  */
static __attribute__ ((noinline)) void *
malloc_at (size_t size, uintptr_t site)
{
  return allocate_in_section (size, PLAIN_ALIGNMENT, site, MEMPROF_TRACE_MALLOC,
                              size, 0);
}

/* Functions that only ever tail-call need no frame of their own, and the
   runtime is built with frame pointers: malloc and realloc's fast paths
   would set one up and take it down for nothing.  */
#define FRAMELESS __attribute__ ((optimize ("omit-frame-pointer")))

FRAMELESS MEMPROF_EXPORT void *
malloc (size_t size)
{
  void *block;
  if (LIKELY (small_left_out_quickly (size, CALLER, &block)))
    return block;
  if (LIKELY (malloc_left_out_quickly (size, CALLER)))
    return glibc_malloc_outside_sections (size);
  return malloc_at (size, CALLER);
}

/* Is POINTER's free glibc's alone: nobody watches and sampling left the
   block out?  free (NULL) is then nothing at all (json_tree frees NULL
   in 4 of its 10 frees).  */
static inline bool
free_is_plain (void *pointer)
{
  return LIKELY (no_observers ())
         && (pointer == NULL || surely_plain (pointer));
}

/* The way of free and operator delete up to the runtime's section: a
   small heap block (a range test and a push), glibc's own block, or a
   handler's free inside a section.  True when POINTER was freed so;
   false when the thread has entered the section and the caller frees.  */
static inline __attribute__ ((always_inline)) bool
freed_before_section (void *pointer)
{
  if (small_heap_owns (pointer) && LIKELY (no_observers ()))
    {
      small_heap_free (pointer);
      return true;
    }
  if (free_is_plain (pointer))
    {
      if (pointer != NULL)
        glibc_free_outside_sections (pointer);
      return true;
    }
  if (!entry_begin ())
    {
      reentered_free (pointer);
      return true;
    }
  return false;
}

MEMPROF_EXPORT void
free (void *pointer)
{
  if (freed_before_section (pointer))
    return;
  /* A slot's block with nobody watching: deallocate would only ask
     again what free_is_plain asked (observers, the slots' range) and
     the trace's and the hooks' flags, which no_observers covers.  */
  if (LIKELY (no_observers ()) && slab_owns (pointer))
    slab_free ((uintptr_t) pointer);
  else
    {
      trace_deallocation (MEMPROF_TRACE_FREE, 0, pointer, 0, 0);
      deallocate (pointer);
    }
  entry_end ();
}

/* C23's sized frees.  A size or alignment other than the block's is
   undefined behaviour in C23; the block is then freed as free () would
   free it, and the first such call of each function is reported on the
   log.  Blocks that are
   not ours go to glibc's free, as in deallocate.  */
static void
check_sized_free (void *pointer, size_t size, size_t alignment,
                  _Atomic bool *reported)
{
  struct block_header *header = checked_header (pointer);
  bool size_wrong, alignment_wrong;
  char given[64];
  uint64_t block_size;

  if (slab_owns (pointer))
    {
      if (!slab_block ((uintptr_t) pointer, &block_size, NULL))
        return;
    }
  else if (header == NULL)
    return;
  else
    block_size = header->size;
  size_wrong = block_size != size;
  alignment_wrong = alignment != 0
                    && (!is_power_of_two (alignment)
                        || ((uintptr_t) pointer & (alignment - 1)) != 0);
  if (!(size_wrong || alignment_wrong) || atomic_exchange (reported, true))
    return;
  if (alignment != 0)
    snprintf (given, sizeof given, "%lu, %lu", (unsigned long) alignment,
              (unsigned long) size);
  else
    snprintf (given, sizeof given, "%lu", (unsigned long) size);
  log_printf ("%s (%p, %s): the block has %lu bytes%s (undefined in C23); "
              "freed as free () would free it; further such calls are not "
              "reported",
              alignment != 0 ? "free_aligned_sized" : "free_sized", pointer,
              given, (unsigned long) block_size,
              alignment_wrong ? " at an address not aligned so" : "");
}

MEMPROF_EXPORT void
free_sized (void *pointer, size_t size)
{
  static _Atomic bool reported;
  if (pointer != NULL)
    check_sized_free (pointer, size, 0, &reported);
  free (pointer);
}

MEMPROF_EXPORT void
free_aligned_sized (void *pointer, size_t alignment, size_t size)
{
  static _Atomic bool reported;
  if (pointer != NULL)
    check_sized_free (pointer, size, alignment, &reported);
  free (pointer);
}

/* calloc's own path for COUNT * SIZE bytes (BYTES, or an overflow) at
   SITE that malloc_left_out_quickly did not decide.  */
static __attribute__ ((noinline)) void *
calloc_at (size_t count, size_t size, size_t bytes, bool overflow,
           uintptr_t site)
{
  void *pointer;
  if (!entry_begin ())
    {
      if (overflow)
        {
          errno = ENOMEM;
          return NULL;
        }
      return glibc_calloc_outside_sections (count, size);
    }
  if (overflow)
    {
      TRACE_ALLOCATION (MEMPROF_TRACE_CALLOC, 0, size, count, NULL);
      entry_end ();
      errno = ENOMEM;
      return NULL;
    }
  uint32_t weight;
  if (!sampling_keeps (bytes, site, &weight))
    {
      /* glibc's calloc knows when its memory is zero already.  */
      pointer = __libc_calloc (count, size);
      if (pointer != NULL)
        hooks_after_allocation (pointer, bytes);
    }
  else
    {
      pointer = NULL;
      STACK_ENTRY_BEGIN ();
      if (slab_takes (bytes, PLAIN_ALIGNMENT))
        pointer = slab_allocate (bytes, site);
      if (pointer == NULL)
        pointer = allocate_with_header (bytes, PLAIN_ALIGNMENT, site, weight);
      STACK_ENTRY_END ();
      if (pointer != NULL)
        memset (pointer, 0, bytes);
    }
  TRACE_ALLOCATION (MEMPROF_TRACE_CALLOC, 0, size, count, pointer);
  entry_end ();
  return pointer;
}

/* The fast path without a frame (calloc_at's registers are saved there
   only): 14 instructions fewer a call.  */
FRAMELESS MEMPROF_EXPORT void *
calloc (size_t count, size_t size)
{
  size_t bytes;
  bool overflow = __builtin_mul_overflow (count, size, &bytes);
  void *block;
  if (LIKELY (!overflow) && bytes <= SMALL_HEAP_MAX
      && LIKELY (small_left_out_quickly (bytes, CALLER, &block)))
    {
      if (block != NULL)
        memset (block, 0, bytes);
      return block;
    }
  if (LIKELY (!overflow && malloc_left_out_quickly (bytes, CALLER)))
    return glibc_calloc_outside_sections (count, size);
  return calloc_at (count, size, bytes, overflow, CALLER);
}

/* realloc: recorded after it returns, with the sequence number read
   before it started (the moment the old block may go back).  */
static void *
traced_reallocate (unsigned op, void *pointer, size_t size,
                   uint64_t traced_size, uintptr_t caller_return)
{
  if (!entry_begin ())
    return reentered_reallocate (pointer, size);
  uint64_t before = trace_is_recording () ? trace_next_sequence () : 0;
  STACK_ENTRY_BEGIN ();
  void *result = reallocate (pointer, size, caller_return);
  STACK_ENTRY_END ();
  if (before != 0 && trace_is_recording ())
    allocator_trace_allocation (op, 0, traced_size, before, result,
                                (uintptr_t) pointer);
  entry_end ();
  return result;
}

/* realloc of the small heap's block POINTER to SIZE bytes (not 0), with
   nobody watching: in place when the block's class holds SIZE and
   sampling leaves the allocation out, as glibc's realloc would be
   asked; into a block of the small heap or glibc's when it leaves it
   out and the class does not hold it; else traced_reallocate's, where
   sampling decides.  */
static __attribute__ ((noinline)) void *
small_heap_reallocate (void *pointer, size_t size, uintptr_t site)
{
  size_t old_size = small_heap_size_of (pointer);
  if (!malloc_left_out_quickly (size, site))
    return traced_reallocate (MEMPROF_TRACE_REALLOC, pointer, size, size, site);
  if (size <= old_size)
    return pointer;
  void *fresh = NULL;
  if (size <= SMALL_HEAP_MAX
      && (atomic_load_explicit (&__memprof_unsampled_path, memory_order_relaxed)
          & UNSAMPLED_SMALL_HEAP))
    fresh = small_heap_allocate (small_heap_class_for (size));
  if (fresh == NULL)
    fresh = glibc_malloc_outside_sections (size);
  if (fresh != NULL)
    {
      memcpy (fresh, pointer, old_size);
      small_heap_free (pointer);
    }
  return fresh;
}

FRAMELESS MEMPROF_EXPORT void *
realloc (void *pointer, size_t size)
{
  if (small_heap_owns (pointer) && size != 0 && LIKELY (no_observers ()))
    return small_heap_reallocate (pointer, size, CALLER);
  /* realloc (NULL, size) is malloc's (Lua allocates every object so).  */
  void *block;
  if (pointer == NULL && LIKELY (small_left_out_quickly (size, CALLER, &block)))
    return block;
  /* glibc's block (or none) to glibc's block: the always-on path.  */
  if (size != 0 && (pointer == NULL || surely_plain (pointer))
      && LIKELY (malloc_left_out_quickly (size, CALLER)))
    return glibc_realloc_outside_sections (pointer, size);
  return traced_reallocate (MEMPROF_TRACE_REALLOC, pointer, size, size, CALLER);
}

MEMPROF_EXPORT void *
reallocarray (void *pointer, size_t count, size_t size)
{
  size_t bytes;
  if (__builtin_mul_overflow (count, size, &bytes))
    {
      TRACE_ALLOCATION (MEMPROF_TRACE_REALLOCARRAY, 0, UINT64_MAX, 0, NULL);
      errno = ENOMEM;
      return NULL;
    }
  return traced_reallocate (MEMPROF_TRACE_REALLOCARRAY, pointer, bytes, bytes,
                            CALLER);
}

MEMPROF_EXPORT void *
memalign (size_t alignment, size_t size)
{
  /* glibc rounds an alignment that is not a power of two up to one.  */
  if (!is_power_of_two (alignment))
    {
      if (alignment > SIZE_MAX / 2 + 1)
        {
          TRACE_ALLOCATION (MEMPROF_TRACE_MEMALIGN, 0, size, alignment, NULL);
          errno = EINVAL;
          return NULL;
        }
      size_t rounded = 1;
      while (rounded < alignment)
        rounded <<= 1;
      alignment = rounded;
    }
  return allocate_in_section (size, alignment, CALLER, MEMPROF_TRACE_MEMALIGN,
                              size, alignment);
}

MEMPROF_EXPORT void *
aligned_alloc (size_t alignment, size_t size)
{
  if (!is_power_of_two (alignment))
    {
      TRACE_ALLOCATION (MEMPROF_TRACE_ALIGNED_ALLOC, 0, size, alignment, NULL);
      errno = EINVAL;
      return NULL;
    }
  return allocate_in_section (size, alignment, CALLER,
                              MEMPROF_TRACE_ALIGNED_ALLOC, size, alignment);
}

MEMPROF_EXPORT int
posix_memalign (void **result, size_t alignment, size_t size)
{
  void *pointer;
  int saved_errno = errno;

  if (!is_power_of_two (alignment) || alignment % sizeof (void *) != 0)
    {
      TRACE_ALLOCATION (MEMPROF_TRACE_POSIX_MEMALIGN, 0, size, alignment, NULL);
      return EINVAL;
    }
  pointer = allocate_in_section (size, alignment, CALLER,
                                 MEMPROF_TRACE_POSIX_MEMALIGN, size, alignment);
  if (pointer == NULL)
    {
      errno = saved_errno;
      return ENOMEM;
    }
  *result = pointer;
  return 0;
}

MEMPROF_EXPORT void *
valloc (size_t size)
{
  size_t page = (size_t) sysconf (_SC_PAGESIZE);
  return allocate_in_section (size, page, CALLER, MEMPROF_TRACE_VALLOC, size,
                              page);
}

MEMPROF_EXPORT void *
pvalloc (size_t size)
{
  size_t page = (size_t) sysconf (_SC_PAGESIZE);
  size_t rounded = size == 0 ? page : ROUND_UP (size, page);
  if (rounded < size)
    {
      TRACE_ALLOCATION (MEMPROF_TRACE_PVALLOC, 0, size, page, NULL);
      errno = ENOMEM;
      return NULL;
    }
  return allocate_in_section (rounded, page, CALLER, MEMPROF_TRACE_PVALLOC,
                              size, page);
}

MEMPROF_EXPORT size_t
malloc_usable_size (void *pointer)
{
  return usable_size (pointer);
}

/* The entries under hidden names (internal.h): direct_calls.c jumps to
   them without the PLT when they are the ones the program calls.  */
extern __typeof__ (malloc) allocator_malloc
    __attribute__ ((alias ("malloc"), copy (malloc)));
extern __typeof__ (calloc) allocator_calloc
    __attribute__ ((alias ("calloc"), copy (calloc)));
extern __typeof__ (realloc) allocator_realloc
    __attribute__ ((alias ("realloc"), copy (realloc)));
extern __typeof__ (free) allocator_free
    __attribute__ ((alias ("free"), copy (free)));

/* ---- For new_delete.c ---- */

/* operator new's always-on path: glibc's block for an allocation of SIZE
   at SITE that malloc_left_out_quickly leaves out, NULL when it does not
   decide (or glibc has no memory): new_delete.c's own path then decides,
   as before.  */
void *
allocator_new_quickly (size_t size, uintptr_t site)
{
  void *block;
  if (LIKELY (small_left_out_quickly (size, site, &block)))
    return block;
  if (LIKELY (malloc_left_out_quickly (size, site)))
    return glibc_malloc_outside_sections (size);
  return NULL;
}

void *allocator_allocate (size_t size, size_t alignment,
                          uintptr_t caller_return);
void *allocator_allocate_reentered (size_t size, size_t alignment);
void allocator_deallocate (void *pointer);
void allocator_deallocate_entered (void *pointer);
void allocator_free_reentered (void *pointer);

/* allocate inside a section the caller entered (entry_begin).  */
void *
allocator_allocate (size_t size, size_t alignment, uintptr_t caller_return)
{
  return allocate (size, alignment, caller_return);
}

/* An allocation the caller could not enter a section for.  */
void *
allocator_allocate_reentered (size_t size, size_t alignment)
{
  return reentered_allocate (size, alignment);
}

void
allocator_free_reentered (void *pointer)
{
  reentered_free (pointer);
}

/* operator delete's, with free's fast path: deallocate saves six
   registers before it looks.  */
void
allocator_deallocate (void *pointer)
{
  if (freed_before_section (pointer))
    return;
  deallocate (pointer);
  entry_end ();
}

/* The same inside a section the caller entered.  */
void
allocator_deallocate_entered (void *pointer)
{
  if (free_is_plain (pointer))
    {
      if (pointer != NULL)
        __libc_free (pointer);
      return;
    }
  deallocate (pointer);
}
