/* The program's own heaps (<memprof/heap.h>): blocks that pools, arenas
   and replaced operator new hand out without malloc, reported by the
   program and recorded as malloc's are -- context, size, lifetime, CPUs,
   and the shadow counters of the granules they cover, cleared when the
   block is handed out and folded when it is given back.

   A reported block has no header of ours in front of it, so the live ones
   are kept in a table of their own: LIVE_SHARDS shards chosen by address,
   each an open-addressing hash table (linear probing, deletion by
   backward shift) in memory of the runtime's own (runtime_map), doubled
   when half full.  Nothing here allocates through malloc.  */

#include "internal.h"

#include <memprof/heap.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MAX_HEAPS 256
#define HEAP_NAME_SIZE 64
#define LIVE_SHARDS 64
#define FIRST_CAPACITY 256 /* entries of a shard's first table, a power of 2 */
/* x86-64 user space, which the shadow covers (shadow.c).  */
#define USER_ADDRESS_LIMIT (1ULL << 47)

static struct
{
  spinlock_t lock;
  unsigned count;
  char names[MAX_HEAPS][HEAP_NAME_SIZE];
} heap_names;

struct heap_block
{
  uintptr_t pointer; /* as reported; 0: a free slot */
  unsigned heap;
  struct live_block block;
};

static struct
{
  spinlock_t lock;
  struct heap_block *slots;
  size_t capacity, used;
} live_shards[LIVE_SHARDS];

static unsigned
shard_of (uintptr_t pointer)
{
  return (unsigned) ((pointer * 0x9e3779b97f4a7c15ULL) >> 58);
}

static size_t
home_slot (uintptr_t pointer, unsigned heap, size_t capacity)
{
  uint64_t key = (pointer ^ ((uint64_t) heap << 48)) * 0xff51afd7ed558ccdULL;
  return (size_t) (key >> 32) & (capacity - 1);
}

/* The slot of (HEAP, POINTER) in SHARD, or of the free slot where it
   would go.  */
static struct heap_block *
find_slot (unsigned shard, uintptr_t pointer, unsigned heap)
{
  size_t mask = live_shards[shard].capacity - 1;
  size_t slot = home_slot (pointer, heap, live_shards[shard].capacity);
  struct heap_block *slots = live_shards[shard].slots;

  while (slots[slot].pointer != 0
         && (slots[slot].pointer != pointer || slots[slot].heap != heap))
    slot = (slot + 1) & mask;
  return &slots[slot];
}

/* Room for one more entry in SHARD (locked); false when no memory.  */
static bool
make_room (unsigned shard)
{
  size_t capacity = live_shards[shard].capacity;
  struct heap_block *old = live_shards[shard].slots, *fresh;

  if (old != NULL && 2 * (live_shards[shard].used + 1) <= capacity)
    return true;
  capacity = capacity ? 2 * capacity : FIRST_CAPACITY;
  fresh = runtime_map (capacity * sizeof *fresh);
  if (fresh == NULL)
    return false;
  live_shards[shard].slots = fresh;
  live_shards[shard].capacity = capacity;
  for (size_t i = 0; old != NULL && i < capacity / 2; i++)
    if (old[i].pointer != 0)
      *find_slot (shard, old[i].pointer, old[i].heap) = old[i];
  if (old != NULL)
    runtime_unmap (old, capacity / 2 * sizeof *old);
  return true;
}

/* Empty the slot ENTRY of SHARD (locked), moving back the entries after
   it that probing would otherwise no longer reach.  */
static void
remove_slot (unsigned shard, struct heap_block *entry)
{
  struct heap_block *slots = live_shards[shard].slots;
  size_t mask = live_shards[shard].capacity - 1;
  size_t hole = (size_t) (entry - slots), next = hole;

  for (;;)
    {
      next = (next + 1) & mask;
      if (slots[next].pointer == 0)
        break;
      size_t home = home_slot (slots[next].pointer, slots[next].heap,
                               live_shards[shard].capacity);
      /* Move it if its home is not in (hole, next], cyclically.  */
      if (((next - home) & mask) >= ((next - hole) & mask))
        {
          slots[hole] = slots[next];
          hole = next;
        }
    }
  slots[hole].pointer = 0;
  live_shards[shard].used--;
}

/* A heap's block is freed: out of the heap's live bytes (peak.c), its
   counts folded into its context.  */
static void
heap_block_freed (const struct live_block *block)
{
  /* One reading of the clock for the peak and the MIB, as malloc's.  */
  uint32_t now = runtime_now_ms ();
  peak_note_free (block->context, block->size, block->weight,
                  clock_reading_tsc ());
  allocator_fold_freed_at (block, now, runtime_current_cpu ());
}

/* Misuse of the API is said once per kind, on the runtime's log.  */
static _Atomic bool warned_unknown_heap, warned_outside;

static void __attribute__ ((format (printf, 2, 3)))
log_once (_Atomic bool *warned, const char *format, ...)
{
  char line[256];
  va_list arguments;

  if (atomic_exchange (warned, true))
    return;
  va_start (arguments, format);
  vsnprintf (line, sizeof line, format, arguments);
  va_end (arguments);
  log_printf ("%s", line);
}

static bool
is_registered (unsigned heap)
{
  return heap != 0
         && heap <= __atomic_load_n (&heap_names.count, __ATOMIC_ACQUIRE);
}

MEMPROF_EXPORT unsigned
__memprof_heap_register (const char *name)
{
  unsigned heap = 0;

  spin_lock (&heap_names.lock);
  if (heap_names.count < MAX_HEAPS)
    {
      char *slot = heap_names.names[heap_names.count];
      strncpy (slot, name != NULL ? name : "(unnamed)", HEAP_NAME_SIZE - 1);
      heap = heap_names.count + 1;
      __atomic_store_n (&heap_names.count, heap, __ATOMIC_RELEASE);
    }
  spin_unlock (&heap_names.lock);
  if (heap != 0 && runtime_options.verbosity >= 1)
    log_printf ("heap %u registered: \"%s\"", heap, heap_names.names[heap - 1]);
  if (heap == 0)
    log_printf ("memprof_heap_register (\"%s\"): already %d heaps; the "
                "blocks of this one are not recorded",
                name != NULL ? name : "(unnamed)", MAX_HEAPS);
  return heap;
}

static bool
take_live (unsigned heap, uintptr_t pointer, struct live_block *taken)
{
  unsigned shard = shard_of (pointer);
  bool found = false;

  spin_lock (&live_shards[shard].lock);
  if (live_shards[shard].slots != NULL)
    {
      struct heap_block *entry = find_slot (shard, pointer, heap);
      if (entry->pointer != 0)
        {
          *taken = entry->block;
          remove_slot (shard, entry);
          found = true;
        }
    }
  spin_unlock (&live_shards[shard].lock);
  return found;
}

MEMPROF_EXPORT void
__memprof_heap_alloc (unsigned heap, const void *block, size_t size)
{
  uintptr_t pointer = (uintptr_t) block;
  uintptr_t caller = (uintptr_t) __builtin_return_address (0);
  struct live_block record, previous;
  unsigned shard = shard_of (pointer);

  if (pointer == 0 || !is_registered (heap))
    {
      if (heap != 0)
        log_once (&warned_unknown_heap,
                  "memprof_heap_alloc: heap %u was never registered; its "
                  "blocks are not recorded",
                  heap);
      return;
    }
  if (size > USER_ADDRESS_LIMIT || pointer > USER_ADDRESS_LIMIT - size)
    {
      /* Not memory the program can have: its shadow would lie outside
         the runtime's.  */
      log_once (&warned_outside,
                "memprof_heap_alloc: heap \"%s\": block %p of %zu bytes "
                "lies outside user space; not recorded",
                heap_names.names[heap - 1], block, size);
      return;
    }
  /* A signal handler's call inside one of the runtime's sections
     (internal.h) takes none of its locks: the block is not recorded.  */
  if (!entry_begin ())
    return;
  if (take_live (heap, pointer, &previous))
    heap_block_freed (&previous);
  STACK_ENTRY_BEGIN ();
  record.context = allocator_capture_context (size, caller, &record.weight);
  STACK_ENTRY_END ();
  if (record.context == NULL)
    {
      entry_end ();
      return;
    }
  record.user = pointer & ~(uintptr_t) (MEMPROF_GRANULE_SIZE - 1);
  record.size = size;
  record.alloc_timestamp = runtime_now_ms ();
  peak_note_allocation (record.context, size, record.weight,
                        clock_reading_tsc ());
  record.alloc_cpu = runtime_current_cpu ();
  shadow_clear (record.user, granules_for (size));

  spin_lock (&live_shards[shard].lock);
  if (make_room (shard))
    {
      struct heap_block *entry = find_slot (shard, pointer, heap);
      entry->pointer = pointer;
      entry->heap = heap;
      entry->block = record;
      live_shards[shard].used++;
    }
  spin_unlock (&live_shards[shard].lock);
  entry_end ();
}

MEMPROF_EXPORT void
__memprof_heap_free (unsigned heap, const void *block)
{
  struct live_block taken;

  /* Inside a section (a signal handler's call), the block stays
     recorded as live.  */
  if (block == NULL || !is_registered (heap) || !entry_begin ())
    return;
  if (take_live (heap, (uintptr_t) block, &taken))
    heap_block_freed (&taken);
  entry_end ();
}

MEMPROF_EXPORT void
__memprof_heap_free_all (unsigned heap)
{
  if (!is_registered (heap) || !entry_begin ())
    return;
  for (unsigned shard = 0; shard < LIVE_SHARDS; shard++)
    {
      struct live_block taken;
      size_t slot = 0;

      spin_lock (&live_shards[shard].lock);
      while (slot < live_shards[shard].capacity)
        {
          struct heap_block *entry = &live_shards[shard].slots[slot];
          if (entry->pointer == 0 || entry->heap != heap)
            {
              slot++;
              continue;
            }
          /* Folded without the lock (the fold takes the context's);
             the slot is examined again, as removal may move another
             entry into it.  */
          taken = entry->block;
          remove_slot (shard, entry);
          spin_unlock (&live_shards[shard].lock);
          heap_block_freed (&taken);
          spin_lock (&live_shards[shard].lock);
        }
      spin_unlock (&live_shards[shard].lock);
    }
  entry_end ();
}

bool
heaps_for_each_live (live_block_visitor visit, void *cookie,
                     unsigned long lock_attempts)
{
  for (unsigned shard = 0; shard < LIVE_SHARDS; shard++)
    {
      if (!spin_lock_within (&live_shards[shard].lock, lock_attempts))
        return false;
      for (size_t slot = 0; slot < live_shards[shard].capacity; slot++)
        {
          const struct heap_block *entry = &live_shards[shard].slots[slot];
          if (entry->pointer != 0)
            visit (entry->block.user, entry->block.size, entry->block.context,
                   entry->block.alloc_timestamp, entry->block.alloc_cpu,
                   entry->block.weight, cookie);
        }
      spin_unlock (&live_shards[shard].lock);
    }
  return true;
}

/* fork: no table may be half-changed in the child.  */
void
heaps_fork_prepare (void)
{
  spin_lock (&heap_names.lock);
  for (unsigned shard = 0; shard < LIVE_SHARDS; shard++)
    spin_lock (&live_shards[shard].lock);
}

void
heaps_fork_release (void)
{
  for (unsigned shard = 0; shard < LIVE_SHARDS; shard++)
    spin_unlock (&live_shards[shard].lock);
  spin_unlock (&heap_names.lock);
}
