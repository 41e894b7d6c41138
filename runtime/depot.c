/* The stack depot: one record per distinct call stack, found by hash in a
   fixed table of lock-free chains.  Records are never freed or moved, so
   a block header can point at its context for the block's whole life.
   Each record also carries its context's MemInfoBlock and the counts of
   its side-file record (under a spin lock, taken only when an allocation
   is folded in).  */

#include "internal.h"
#include "depot_fold.h"

#include <string.h>

/* Buckets in the hash table (a power of two); more contexts than this
   only make chains longer.  A sampled run's table has
   DEPOT_SAMPLED_BUCKETS (runtime_table_entries): its few thousand
   contexts would otherwise each fault in a page of their own.  */
#define DEPOT_BUCKETS (1UL << 20)
#define DEPOT_SAMPLED_BUCKETS (1UL << 15)
/* Address space reserved for records and histograms, committed as used:
   the first of these sizes the system grants (a limit on address space,
   RLIMIT_AS, may refuse the larger).  */
static const size_t depot_arena_sizes[] = { 8UL << 30, 1UL << 30, 128UL << 20 };

static struct depot_context *_Atomic *depot_table;
/* One bit per bucket, set when the bucket gets its first record: the
   walk over every context (depot_for_each, when the profile is written)
   reads these 128 KiB, not the table's 8 MiB (2-3 ms a run).  */
static _Atomic uint64_t *depot_used;
/* The table's buckets, chosen when it is made (a power of two).  */
static size_t depot_buckets;
static char *depot_arena;
static size_t depot_arena_size;
static _Atomic size_t depot_arena_used;
static _Atomic uint64_t depot_next_id = 1;
static _Atomic uint64_t depot_contexts;
static spinlock_t depot_setup_lock = SPINLOCK_INIT;
static _Atomic bool depot_ready;
static _Atomic bool depot_full_reported;

/* The context given when the arena is exhausted (one empty-stack record). */
static struct
{
  struct depot_context context;
  uintptr_t pc;
} depot_overflow __attribute__ ((aligned (DEPOT_RECORD_ALIGN)));

static bool
depot_setup (void)
{
  if (atomic_load_explicit (&depot_ready, memory_order_acquire))
    return true;
  spin_lock (&depot_setup_lock);
  if (!depot_ready)
    {
      depot_buckets
          = runtime_table_entries (DEPOT_BUCKETS, DEPOT_SAMPLED_BUCKETS);
      depot_table = runtime_map (depot_buckets * sizeof *depot_table);
      depot_used = runtime_map (depot_buckets / 64 * sizeof *depot_used);
      for (size_t i = 0;
           depot_arena == NULL
           && i < sizeof depot_arena_sizes / sizeof depot_arena_sizes[0];
           i++)
        if ((depot_arena = runtime_map (depot_arena_sizes[i])) != NULL)
          depot_arena_size = depot_arena_sizes[i];
      if (depot_table != NULL && depot_used != NULL && depot_arena != NULL)
        atomic_store_explicit (&depot_ready, true, memory_order_release);
    }
  spin_unlock (&depot_setup_lock);
  return depot_ready;
}

static void *
arena_allocate (size_t size)
{
  /* Every record starts on a cache line (struct depot_context).  */
  size = ROUND_UP (size, DEPOT_RECORD_ALIGN);
  size_t offset = atomic_fetch_add (&depot_arena_used, size);
  if (offset + size > depot_arena_size)
    {
      if (!atomic_exchange (&depot_full_reported, true))
        log_printf ("the stack depot is full (%lu MiB); further new call "
                    "stacks are recorded as one unknown context",
                    depot_arena_size >> 20);
      return NULL;
    }
  return depot_arena + offset;
}

uint64_t *
depot_arena_values (uint32_t count)
{
  return arena_allocate ((size_t) count * sizeof (uint64_t));
}

static uint64_t
hash_stack (const uintptr_t *pcs, uint32_t depth)
{
  /* FNV-1a over the words, then a final mix.  */
  uint64_t hash = 0xcbf29ce484222325ULL ^ depth;
  for (uint32_t i = 0; i < depth; i++)
    {
      hash ^= pcs[i];
      hash *= 0x100000001b3ULL;
      hash ^= hash >> 29;
    }
  hash ^= hash >> 33;
  hash *= 0xff51afd7ed558ccdULL;
  hash ^= hash >> 33;
  return hash;
}

static struct depot_context *
find_in_chain (struct depot_context *node, uint64_t hash, const uintptr_t *pcs,
               uint32_t depth)
{
  for (; node != NULL;
       node = atomic_load_explicit (&node->next, memory_order_acquire))
    if (node->hash == hash && node->depth == depth
        && memcmp (node->pcs, pcs, depth * sizeof *pcs) == 0)
      return node;
  return NULL;
}

static struct depot_context *
overflow_context (void)
{
  if (depot_overflow.context.id == 0)
    depot_overflow.context.id = UINT64_MAX - 2; /* not LLVM's reserved keys */
  return &depot_overflow.context;
}

struct depot_context *
depot_intern (const uintptr_t *pcs, uint32_t depth)
{
  uint64_t hash = hash_stack (pcs, depth);
  struct depot_context *_Atomic *bucket;
  struct depot_context *head, *found, *fresh;

  if (!depot_setup ())
    return overflow_context ();
  size_t index = hash & (depot_buckets - 1);
  bucket = &depot_table[index];
  head = atomic_load_explicit (bucket, memory_order_acquire);
  found = find_in_chain (head, hash, pcs, depth);
  if (found != NULL)
    return found;

  fresh = arena_allocate (sizeof *fresh + depth * sizeof *pcs);
  if (fresh == NULL)
    return overflow_context ();
  fresh->hash = hash;
  fresh->depth = depth;
  memcpy (fresh->pcs, pcs, depth * sizeof *pcs);
  fresh->id = atomic_fetch_add (&depot_next_id, 1);
  for (;;)
    {
      atomic_store_explicit (&fresh->next, head, memory_order_relaxed);
      if (atomic_compare_exchange_weak_explicit (
              bucket, &head, fresh, memory_order_release, memory_order_acquire))
        {
          if (head == NULL)
            atomic_fetch_or_explicit (&depot_used[index / 64],
                                      1ULL << (index % 64),
                                      memory_order_release);
          atomic_fetch_add (&depot_contexts, 1);
          return fresh;
        }
      /* Another thread added to this chain: it may have added our stack.
         Our record then stays unused in the arena.  */
      found = find_in_chain (head, hash, pcs, depth);
      if (found != NULL)
        return found;
    }
}

void
context_extra_init_one (struct context_extra *extra, uint64_t size,
                        uint64_t accesses, uint64_t touched_counters,
                        uint32_t granule_size, uint32_t weight)
{
  uint64_t allocations = weight > 1 ? weight : 1; /* as mib_scale */
  uint64_t touched = touched_counters * granule_size;

  if (touched > size)
    touched = size;
  extra->untouched_allocations = accesses == 0 ? allocations : 0;
  extra->touched_bytes = touched * allocations;
}

void
depot_fold (struct depot_context *context, const struct memprof_mib *mib,
            const uint64_t *histogram, const struct context_extra *extra)
{
  uint32_t entries = mib->access_histogram_size;

  spin_lock (&context->lock);
  context->extra.untouched_allocations += extra->untouched_allocations;
  context->extra.touched_bytes += extra->touched_bytes;
  if (entries > context->histogram_capacity)
    {
      uint64_t *larger = depot_arena_values (entries);
      if (larger != NULL)
        {
          if (context->histogram != NULL)
            memcpy (larger, context->histogram,
                    context->mib.access_histogram_size * sizeof (uint64_t));
          context->histogram = larger;
          context->histogram_capacity = entries;
        }
      else
        entries = context->histogram_capacity;
    }
  if (context->mib.alloc_count == 0)
    {
      context->mib = *mib;
      context->mib.access_histogram_size = entries;
      if (entries > 0)
        memcpy (context->histogram, histogram, entries * sizeof (uint64_t));
    }
  else
    {
      struct memprof_mib folded = *mib;
      folded.access_histogram_size = entries;
      mib_merge (&context->mib, &folded);
      mib_histogram_merge (context->histogram, histogram, entries);
    }
  spin_unlock (&context->lock);
}

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* The CPU and overlap counts of MIB with one block more, freed on
   DEALLOC_CPU.  */
static inline void
fold_counts (struct memprof_mib *mib, const struct live_block *block,
             uint32_t dealloc_cpu)
{
  mib->num_lifetime_overlaps += block->alloc_timestamp < mib->dealloc_timestamp;
  mib->num_same_alloc_cpu += mib->alloc_cpu_id == block->alloc_cpu;
  mib->num_same_dealloc_cpu += mib->dealloc_cpu_id == dealloc_cpu;
}

/* The Min and Max fields of MIB (and its CPU counts) with one block
   more, of the values given; the first block sets them.  */
static inline void
fold_extremes (struct memprof_mib *mib, const struct live_block *block,
               uint64_t accesses, uint32_t size32, uint32_t lifetime,
               uint64_t density, uint64_t lifetime_density,
               uint32_t dealloc_cpu)
{
  if (mib->alloc_count == 0)
    {
      memset (mib, 0, sizeof *mib);
      mib->min_access_count = mib->max_access_count = accesses;
      mib->min_size = mib->max_size = size32;
      mib->min_lifetime = mib->max_lifetime = lifetime;
      mib->min_access_density = mib->max_access_density = (uint32_t) density;
      mib->min_lifetime_access_density = mib->max_lifetime_access_density
          = (uint32_t) lifetime_density;
      mib->num_migrated_cpu = block->alloc_cpu != dealloc_cpu;
      return;
    }
  mib->min_access_count = MIN (mib->min_access_count, accesses);
  mib->max_access_count = MAX (mib->max_access_count, accesses);
  mib->min_size = MIN (mib->min_size, size32);
  mib->max_size = MAX (mib->max_size, size32);
  mib->min_lifetime = MIN (mib->min_lifetime, lifetime);
  mib->max_lifetime = MAX (mib->max_lifetime, lifetime);
  mib->min_access_density = MIN (mib->min_access_density, (uint32_t) density);
  mib->max_access_density = MAX (mib->max_access_density, (uint32_t) density);
  mib->min_lifetime_access_density
      = MIN (mib->min_lifetime_access_density, (uint32_t) lifetime_density);
  mib->max_lifetime_access_density
      = MAX (mib->max_lifetime_access_density, (uint32_t) lifetime_density);
  fold_counts (mib, block, dealloc_cpu);
}

/* depot_fold_block the long way, under CONTEXT's lock (released here):
   every Min and Max compared, the densities divided, the values kept as
   the context's last fold.  */
__attribute__ ((noinline)) void
depot_fold_long_way (struct depot_context *context,
                     const struct live_block *block, uint64_t accesses,
                     uint64_t touched_bytes, uint32_t size32, uint32_t lifetime,
                     uint32_t now, uint32_t dealloc_cpu)
{
  uint64_t weight = block->weight > 1 ? block->weight : 1;
  uint64_t density = 0, lifetime_density = 0;
  struct memprof_mib *mib = &context->mib;
  struct context_last_fold *last = &context->last_fold;

  if (accesses == 0)
    context->extra.untouched_allocations += weight;
  context->extra.touched_bytes += touched_bytes * weight;
  if (accesses == 0 && last->accesses == 0 && last->size != 0
      && mib->alloc_count != 0)
    {
      /* A block with no access after one folded here with none (the
         runtime alone, or a block the program never read): the minimum
         access count and both minimum densities are 0 already and its
         densities 0 move no maximum, so only its size and lifetime are
         compared (the sizes of a context that vary, as a loop's, or its
         lifetimes); the last fold's accesses and densities stay (0).
         Size 0 in the last fold: none since the MIB was emptied.  */
      mib->min_size = MIN (mib->min_size, size32);
      mib->max_size = MAX (mib->max_size, size32);
      mib->min_lifetime = MIN (mib->min_lifetime, lifetime);
      mib->max_lifetime = MAX (mib->max_lifetime, lifetime);
      fold_counts (mib, block, dealloc_cpu);
    }
  else
    {
      if (accesses != 0) /* two divisions saved when nothing was counted */
        {
          density = accesses * 100 / size32;
          lifetime_density = density * 1000 / (lifetime ? lifetime : 1);
        }
      fold_extremes (mib, block, accesses, size32, lifetime, density,
                     lifetime_density, dealloc_cpu);
      last->accesses = accesses;
      last->density = density;
      last->lifetime_density = lifetime_density;
    }
  /* The block's size and lifetime become the last fold's, so that a
     context whose lifetimes move one millisecond at a time takes the
     inline short way again at its next block.  */
  last->size = size32;
  last->lifetime = lifetime;
  mib->alloc_count += (uint32_t) weight;
  mib->total_access_count += accesses * weight;
  mib->total_size += size32 * weight;
  mib->total_lifetime += lifetime * weight;
  mib->total_access_density += density * weight;
  mib->total_lifetime_access_density += lifetime_density * weight;
  mib->alloc_timestamp = block->alloc_timestamp;
  mib->dealloc_timestamp = now;
  mib->alloc_cpu_id = block->alloc_cpu;
  mib->dealloc_cpu_id = dealloc_cpu;
  spin_unlock (&context->lock);
}

/* See internal.h; the code is depot_fold_inline (depot_fold.h), which
   the free paths inline.  */
void
depot_fold_block (const struct live_block *block, uint64_t accesses,
                  uint64_t touched_counters, uint32_t now, uint32_t dealloc_cpu)
{
  depot_fold_inline (block, accesses, touched_counters, now, dealloc_cpu);
}

static void
visit_chain (struct depot_context *node,
             void (*visit) (struct depot_context *, void *), void *cookie)
{
  for (; node != NULL;
       node = atomic_load_explicit (&node->next, memory_order_acquire))
    visit (node, cookie);
}

void
depot_for_each (void (*visit) (struct depot_context *, void *), void *cookie)
{
  if (depot_ready)
    for (size_t word = 0; word < depot_buckets / 64; word++)
      for (uint64_t used
           = atomic_load_explicit (&depot_used[word], memory_order_acquire);
           used != 0; used &= used - 1)
        {
          size_t i = word * 64 + (size_t) __builtin_ctzll (used);
          visit_chain (
              atomic_load_explicit (&depot_table[i], memory_order_acquire),
              visit, cookie);
        }
  if (depot_overflow.context.id != 0)
    visit (&depot_overflow.context, cookie);
}

static void
reset_one (struct depot_context *context, void *cookie)
{
  (void) cookie;
  spin_lock (&context->lock);
  memset (&context->mib, 0, sizeof context->mib);
  memset (&context->extra, 0, sizeof context->extra);
  memset (&context->last_fold, 0, sizeof context->last_fold);
  /* The next fold starts a histogram shorter than the buffer may be.  */
  if (context->histogram != NULL)
    memset (context->histogram, 0,
            context->histogram_capacity * sizeof (uint64_t));
  spin_unlock (&context->lock);
}

/* In a child after fork: a context's lock held by another thread of the
   parent would never be released.  */
static void
unlock_one (struct depot_context *context, void *cookie)
{
  (void) cookie;
  spin_unlock (&context->lock);
}

void
depot_fork_child (void)
{
  spin_unlock (&depot_setup_lock);
  depot_for_each (unlock_one, NULL);
}

void
depot_reset_records (void)
{
  depot_for_each (reset_one, NULL);
}

uint64_t
depot_context_count (void)
{
  return depot_contexts;
}
