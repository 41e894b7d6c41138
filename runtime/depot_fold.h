/* The fold of a freed block of weight 1 into its context, inline in the
   free paths (slab.c, allocator.c): its counters read and cleared, and
   the short way of depot_fold_block (depot.c) when the block has the
   context's last long-folded values.  Out of line, a free went through
   allocator_fold_freed_at and depot_fold_block: two calls, their saved
   registers and their checks, 38 instructions of a full-profiling
   malloc+free pair on binary_trees.  */

#ifndef MEMPROF_RUNTIME_DEPOT_FOLD_H
#define MEMPROF_RUNTIME_DEPOT_FOLD_H

#include "internal.h"

/* shadow_collect of the counters of BLOCK without a histogram: a block
   of one granule (the common small block) has one counter, read and
   cleared here without the call.  */
static inline uint64_t
collect_counters (const struct live_block *block, uint64_t *touched_counters)
{
  if (__memprof_shadow_base == 0)
    {
      /* No instrumented code: nothing was counted.  */
      *touched_counters = 0;
      return 0;
    }
  if (block->size <= MEMPROF_GRANULE_SIZE && !runtime_histogram)
    {
      uint64_t *counter
          = memprof_shadow_for (__memprof_shadow_base, block->user);
      uint64_t accesses = *counter;
      *touched_counters = accesses != 0;
      if (accesses != 0)
        *counter = 0;
      return accesses;
    }
  return shadow_collect (block->user, granules_for (block->size), true,
                         touched_counters, NULL, 0);
}

/* depot_fold_block the long way (depot.c), under CONTEXT's lock (which
   it releases).  */
void depot_fold_long_way (struct depot_context *context,
                          const struct live_block *block, uint64_t accesses,
                          uint64_t touched_bytes, uint32_t size32,
                          uint32_t lifetime, uint32_t now,
                          uint32_t dealloc_cpu);

/* depot_fold_block of BLOCK, of weight 1 or more.  */
static inline void
depot_fold_inline (const struct live_block *block, uint64_t accesses,
                   uint64_t touched_counters, uint32_t now,
                   uint32_t dealloc_cpu)
{
  /* mib_init_one's values, as mib_scale weighs them.  */
  uint32_t size32 = (uint32_t) block->size ? (uint32_t) block->size : 1;
  /* A clock reading from the ticker's word may be a little before an
     exact one of another thread (ticker.c): never a negative lifetime.  */
  uint32_t lifetime = (int32_t) (now - block->alloc_timestamp) > 0
                          ? now - block->alloc_timestamp
                          : 0;
  /* context_extra_init_one's values, kept in registers: a struct
     written here and read back as one 16-byte load stalls (store
     forwarding fails; 3 % of a full-profiling pair).  */
  uint64_t touched_bytes = touched_counters * shadow_granule_size ();
  if (touched_bytes > block->size)
    touched_bytes = block->size;
  struct depot_context *context = block->context;
  struct memprof_mib *mib = &context->mib;
  const struct context_last_fold *last = &context->last_fold;

  spin_lock_hot (&context->lock);
  if (UNLIKELY (block->weight > 1 || mib->alloc_count == 0
                || last->accesses != accesses || last->size != size32
                || last->lifetime != lifetime))
    {
      depot_fold_long_way (context, block, accesses, touched_bytes, size32,
                           lifetime, now, dealloc_cpu);
      return;
    }
  /* The short way: a block of weight 1 with the values of the last block
     folded the long way (blocks of one context mostly are: one size, the
     same accesses, a lifetime in whole milliseconds).  Every Min and Max
     stays, the densities are the last ones: only the Totals, the CPU and
     overlap counts and the last timestamps and CPUs move.  The long way
     gives the same MIB (its weighted blocks take it).  */
  context->extra.untouched_allocations += accesses == 0;
  context->extra.touched_bytes += touched_bytes;
  mib->num_lifetime_overlaps += block->alloc_timestamp < mib->dealloc_timestamp;
  mib->num_same_alloc_cpu += mib->alloc_cpu_id == block->alloc_cpu;
  mib->num_same_dealloc_cpu += mib->dealloc_cpu_id == dealloc_cpu;
  mib->alloc_count++;
  mib->total_access_count += accesses;
  mib->total_size += size32;
  mib->total_lifetime += lifetime;
  mib->total_access_density += last->density;
  mib->total_lifetime_access_density += last->lifetime_density;
  mib->alloc_timestamp = block->alloc_timestamp;
  mib->dealloc_timestamp = now;
  mib->alloc_cpu_id = block->alloc_cpu;
  mib->dealloc_cpu_id = dealloc_cpu;
  spin_unlock (&context->lock);
}

/* What a fold with a histogram needs (allocator.c).  */
void allocator_fold_with_histogram (const struct live_block *block,
                                    uint32_t now, uint32_t cpu);

/* allocator_fold_freed_at, inline: a block freed at NOW on CPU folded
   into its context, its counters cleared; nothing while the runtime is
   not running or is the caller.  */
static inline void
allocator_fold_inline (const struct live_block *block, uint32_t now,
                       uint32_t cpu)
{
  if (UNLIKELY (runtime_state != RUNTIME_RUNNING) || in_runtime)
    return;
  in_runtime++;
  if (UNLIKELY (runtime_histogram))
    allocator_fold_with_histogram (block, now, cpu);
  else
    {
      uint64_t touched_counters;
      uint64_t accesses = collect_counters (block, &touched_counters);
      depot_fold_inline (block, accesses, touched_counters, now, cpu);
    }
  in_runtime--;
}

#endif
