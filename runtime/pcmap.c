/* A lock-free map from code addresses to one 64-bit value, for what the
   stack capture learns once per return address (its function, whether a
   frame-pointer step from it is exact: runtime/stack.c's frame facts).  Fixed size, never shrinks:
   entries are never removed, a full map only means more work for the
   caller.  Its memory is mapped on first use.  */

#include "internal.h"

#define PC_MAP_SIZE (1U << 16) /* entries, a power of two */
#define PC_MAP_PROBES 8
/* Entries of a sampled run's maps (runtime_table_entries): its return
   addresses would otherwise each fault in a page of their own.  */
#define PC_MAP_SAMPLED_SIZE (1U << 13)

struct pc_entry
{
  _Atomic uintptr_t pc;   /* 0: free */
  _Atomic uint64_t value; /* 0: none yet */
};

/* Entries of every map's table, chosen when the first is made; 0
   before.  */
static _Atomic size_t pc_map_entries;

static size_t
pc_map_size (void)
{
  size_t size = atomic_load_explicit (&pc_map_entries, memory_order_relaxed);
  if (UNLIKELY (size == 0))
    {
      size_t chosen = runtime_table_entries (PC_MAP_SIZE, PC_MAP_SAMPLED_SIZE);
      if (atomic_compare_exchange_strong (&pc_map_entries, &size, chosen))
        size = chosen;
    }
  return size;
}

static struct pc_entry *
pc_map_table (struct pc_map *map)
{
  struct pc_entry *table
      = atomic_load_explicit (&map->table, memory_order_acquire);
  if (table == NULL)
    {
      struct pc_entry *fresh = runtime_map (pc_map_size () * sizeof *fresh);
      if (fresh == NULL)
        return NULL;
      if (atomic_compare_exchange_strong (&map->table, &table, fresh))
        table = fresh;
      else
        runtime_unmap (fresh, pc_map_size () * sizeof *fresh);
    }
  return table;
}

/* PC's entry; with CREATE, claimed when PC has none.  NULL when PC has
   none and none can be claimed.  */
static struct pc_entry *
pc_map_entry (struct pc_map *map, uintptr_t pc, bool create)
{
  struct pc_entry *table = pc_map_table (map);
  unsigned slot = (unsigned) ((pc * 0x9e3779b97f4a7c15ULL) >> 48);
  size_t mask = pc_map_size () - 1;

  if (table == NULL || pc == 0)
    return NULL;
  for (int probe = 0; probe < PC_MAP_PROBES; probe++)
    {
      struct pc_entry *entry = &table[(slot + probe) & mask];
      uintptr_t seen = atomic_load_explicit (&entry->pc, memory_order_acquire);
      if (seen == pc)
        return entry;
      if (seen == 0)
        {
          if (!create)
            return NULL;
          if (atomic_compare_exchange_strong (&entry->pc, &seen, pc)
              || seen == pc)
            return entry;
        }
    }
  return NULL;
}

uint64_t
pc_map_get (struct pc_map *map, uintptr_t pc)
{
  struct pc_entry *entry = pc_map_entry (map, pc, false);
  return entry == NULL
             ? 0
             : atomic_load_explicit (&entry->value, memory_order_acquire);
}

void
pc_map_set (struct pc_map *map, uintptr_t pc, uint64_t value)
{
  struct pc_entry *entry = pc_map_entry (map, pc, true);
  if (entry != NULL)
    atomic_store_explicit (&entry->value, value, memory_order_release);
}

bool
pc_map_update (struct pc_map *map, uintptr_t pc, uint64_t mask, uint64_t bits,
               bool only_if_clear)
{
  struct pc_entry *entry = pc_map_entry (map, pc, true);
  if (entry == NULL)
    return false;
  uint64_t old = atomic_load_explicit (&entry->value, memory_order_acquire);
  do
    if (only_if_clear && (old & mask) != 0)
      return false;
  while (!atomic_compare_exchange_weak (&entry->value, &old,
                                        (old & ~mask) | bits));
  return true;
}

/* See internal.h.  The entries stay claimed by their addresses (the
   probe sequences of the others pass through them); their values are
   cleared, to be learnt again if code is mapped there again.  */
void
pc_map_forget_range (struct pc_map *map, uintptr_t low, uintptr_t high)
{
  struct pc_entry *table
      = atomic_load_explicit (&map->table, memory_order_acquire);
  if (table == NULL)
    return;
  for (size_t i = 0, size = pc_map_size (); i < size; i++)
    {
      uintptr_t pc = atomic_load_explicit (&table[i].pc, memory_order_relaxed);
      if (pc >= low && pc < high)
        atomic_store_explicit (&table[i].value, 0, memory_order_release);
    }
}
