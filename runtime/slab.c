/* Small blocks in slots of the runtime's own (small_slots=1, full
   profiling only).

   A block of at most SLAB_MAX_SIZE bytes with malloc's alignment (or up
   to 64) gets a slot of its size class (64, 128, ... 512 bytes) instead
   of a glibc chunk with a header in front of it.  The slots are carved
   from one range of address space reserved once (SLAB_REGION_BYTES,
   committed by the kernel page by page as slots are first used), in
   spans of SLAB_SPAN_BYTES, each span of one class.  Every slot starts
   on a 64-byte counter granule and holds one block, so no two live
   blocks share a shadow counter and a block's counts are exact, as with
   the header's layout.

   A slot's metadata sit out of line, in an array with one 16-byte entry
   per granule of the range (only a slot's first granule's entry is
   used): its context (NULL when the block is not recorded, or free), its
   allocation time and CPU, its size and whether the slot is in use.  A
   20-byte block costs 64 bytes of slot, 16 of metadata and 8 of shadow;
   with the header it cost a 128-byte glibc chunk and 16 of shadow.

   free, realloc and malloc_usable_size tell slot blocks from glibc's by
   comparing the address with the range (slab_owns).  The live walk
   (allocator_for_each_live) visits the slots whose context is set, with
   their class's lock held.  Free slots go on their class's free list (the
   link is the slot's first word) and are reused by that class only; a
   span stays with its class, and its pages are not given back to the
   kernel (docs/internals.md, "Block layout").

   One lock per class guards its free list, its spans and the in-use bit
   of its slots.  An allocation pops a slot under the lock, then takes its
   context outside it and publishes the context last (release), so that
   the walk sees either no context or a whole entry.  A free clears the
   context under the lock (the walk no longer sees the block), folds the
   counters, and only then puts the slot back on the list (a new block in
   the slot could otherwise lose its first counts to the fold).  */

#include "internal.h"
#include "events.h"

#include <string.h>
#include <sys/mman.h>

#define SLAB_CLASSES (SLAB_MAX_SIZE / MEMPROF_GRANULE_SIZE)
#define SLAB_SPAN_SHIFT 20
#define SLAB_SPAN_BYTES (1UL << SLAB_SPAN_SHIFT)
#define SLAB_SPANS (SLAB_REGION_BYTES >> SLAB_SPAN_SHIFT)

struct slab_meta
{
  struct depot_context *_Atomic context; /* NULL: not recorded, or free */
  uint32_t alloc_timestamp;
  uint16_t alloc_cpu;
  uint16_t size : 15; /* as requested */
  uint16_t in_use : 1;
};

_Static_assert(sizeof (struct slab_meta) == 16, "16 bytes per slot");
_Static_assert(SLAB_MAX_SIZE < (1 << 15), "the size fits its field");

uintptr_t __memprof_slab_base = SLAB_UNRESERVED;
static struct slab_meta *slab_metas;
static spinlock_t reserve_lock = SPINLOCK_INIT;
static bool reserve_failed;

/* The class + 1 of each span (0: not carved yet).  */
static uint8_t span_class[SLAB_SPANS];
/* Spans handed to classes so far (guarded by spans_lock).  */
static size_t spans_used;
static spinlock_t spans_lock = SPINLOCK_INIT;

static struct
{
  spinlock_t lock;
  uintptr_t free;             /* a free slot; its first word: the next */
  uintptr_t carve, carve_end; /* slots of the class's newest span not yet
                                 handed out */
  char padding[64 - sizeof (spinlock_t) - 3 * sizeof (uintptr_t)];
} classes[SLAB_CLASSES] __attribute__ ((aligned (64)));

static inline size_t
slot_bytes (unsigned class)
{
  return (size_t) (class + 1) * MEMPROF_GRANULE_SIZE;
}

static inline struct slab_meta *
meta_of (uintptr_t slot)
{
  return &slab_metas[(slot - __memprof_slab_base) >> MEMPROF_GRANULE_SHIFT];
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
      void *metas = runtime_map (meta_bytes);
      void *region = metas ? runtime_map (SLAB_REGION_BYTES) : NULL;
      if (region == NULL)
        {
          if (metas != NULL)
            runtime_unmap (metas, meta_bytes);
          reserve_failed = true;
        }
      else
        {
          /* Scattered metadata and slots would commit 2 MiB at a time.  */
          madvise (metas, meta_bytes, MADV_NOHUGEPAGE);
          slab_metas = metas;
          atomic_store_explicit ((_Atomic uintptr_t *) &__memprof_slab_base,
                                 (uintptr_t) region, memory_order_release);
        }
    }
  spin_unlock (&reserve_lock);
  return __memprof_slab_base != SLAB_UNRESERVED;
}

/* A slot of CLASS, off its free list or carved; 0 when the range is
   used up.  Called with the class's lock held.  */
static uintptr_t
take_slot (unsigned class)
{
  uintptr_t slot = classes[class].free;
  if (slot != 0)
    {
      classes[class].free = *(uintptr_t *) slot;
      return slot;
    }
  if (classes[class].carve + slot_bytes (class) > classes[class].carve_end)
    {
      size_t span;
      spin_lock (&spans_lock);
      span = spans_used < SLAB_SPANS ? spans_used++ : SLAB_SPANS;
      spin_unlock (&spans_lock);
      if (span == SLAB_SPANS)
        return 0;
      span_class[span] = (uint8_t) (class + 1);
      classes[class].carve = __memprof_slab_base + (span << SLAB_SPAN_SHIFT);
      classes[class].carve_end = classes[class].carve + SLAB_SPAN_BYTES;
    }
  slot = classes[class].carve;
  classes[class].carve += slot_bytes (class);
  return slot;
}

void *
slab_allocate (size_t size, uintptr_t caller_return)
{
  unsigned class = size == 0 ? 0
                             : (unsigned) ((size - 1) >> MEMPROF_GRANULE_SHIFT);
  uintptr_t slot;
  struct slab_meta *meta;
  struct depot_context *context;
  uint32_t weight;

  if (UNLIKELY (__memprof_slab_base == SLAB_UNRESERVED) && !reserve ())
    return NULL;
  spin_lock_hot (&classes[class].lock);
  slot = take_slot (class);
  if (slot != 0)
    {
      meta = meta_of (slot);
      meta->size = (uint16_t) size;
      meta->in_use = 1;
    }
  spin_unlock (&classes[class].lock);
  if (UNLIKELY (slot == 0))
    return NULL;

  context = allocator_capture_context (size, caller_return, &weight);
  if (context != NULL)
    {
      /* weight is 1: slots serve full profiling only.  */
      meta->alloc_timestamp = runtime_now_ms ();
      meta->alloc_cpu = (uint16_t) runtime_current_cpu ();
      shadow_clear (slot, granules_for (size));
      peak_note_allocation (context, size, 1, clock_reading_tsc ());
      atomic_store_explicit (&meta->context, context, memory_order_release);
    }
  hooks_after_allocation ((void *) slot, size);
  events_after_allocation ((void *) slot, size, context ? context->id : 0,
                           caller_return);
  return (void *) slot;
}

/* The class of the slot block POINTER (slab_owns it), or SLAB_CLASSES
   when POINTER is not the start of a slot in use.  */
static unsigned
class_of (uintptr_t pointer)
{
  size_t span = (pointer - __memprof_slab_base) >> SLAB_SPAN_SHIFT;
  unsigned class = span_class[span];
  if (class == 0
      || ((pointer - __memprof_slab_base) & (SLAB_SPAN_BYTES - 1))
                 % slot_bytes (class - 1)
             != 0)
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
  unsigned class = class_of (pointer);
  struct slab_meta *meta;
  struct live_block block;

  if (class == SLAB_CLASSES)
    {
      report_bad_pointer ("free", pointer);
      return;
    }
  meta = meta_of (pointer);
  spin_lock_hot (&classes[class].lock);
  if (!meta->in_use)
    {
      spin_unlock (&classes[class].lock);
      report_bad_pointer ("free", pointer);
      return;
    }
  block.context = atomic_load_explicit (&meta->context, memory_order_relaxed);
  if (block.context != NULL)
    {
      block.user = pointer;
      block.size = meta->size;
      block.alloc_timestamp = meta->alloc_timestamp;
      block.alloc_cpu = meta->alloc_cpu;
      block.weight = 1;
      /* The walk no longer sees the block.  */
      atomic_store_explicit (&meta->context, NULL, memory_order_relaxed);
      spin_unlock (&classes[class].lock);
      /* One reading of the clock for the peak and the MIB.  */
      uint32_t now = runtime_now_ms ();
      peak_note_free (block.context, block.size, 1, clock_reading_tsc ());
      allocator_fold_freed_at (&block, now);
      spin_lock_hot (&classes[class].lock);
    }
  meta->in_use = 0;
  *(uintptr_t *) pointer = classes[class].free;
  classes[class].free = pointer;
  spin_unlock (&classes[class].lock);
}

bool
slab_block (uintptr_t pointer, uint64_t *size, uint32_t *context_id)
{
  unsigned class = class_of (pointer);
  struct slab_meta *meta;
  struct depot_context *context;

  if (class == SLAB_CLASSES || !meta_of (pointer)->in_use)
    return false;
  meta = meta_of (pointer);
  *size = meta->size;
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
  size_t spans;

  if (__memprof_slab_base == SLAB_UNRESERVED)
    return true;
  spans = __atomic_load_n (&spans_used, __ATOMIC_ACQUIRE);
  for (unsigned class = 0; class < SLAB_CLASSES; class ++)
    {
      size_t bytes = slot_bytes (class);
      if (!spin_lock_within (&classes[class].lock, lock_attempts))
        return false;
      for (size_t span = 0; span < spans; span++)
        {
          if (span_class[span] != class + 1)
            continue;
          /* Slots not carved yet have a zero entry, as free ones.  */
          uintptr_t start = __memprof_slab_base + (span << SLAB_SPAN_SHIFT);
          for (uintptr_t slot = start; slot + bytes <= start + SLAB_SPAN_BYTES;
               slot += bytes)
            {
              struct slab_meta *meta = meta_of (slot);
              struct depot_context *context
                  = atomic_load_explicit (&meta->context, memory_order_acquire);
              if (context != NULL)
                visit (slot, meta->size, context, meta->alloc_timestamp,
                       meta->alloc_cpu, 1, cookie);
            }
        }
      spin_unlock (&classes[class].lock);
    }
  return true;
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
