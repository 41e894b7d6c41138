/* MemInfoBlock arithmetic, as LLVM 19 does it
   (llvm/ProfileData/MemProfData.inc). Every truncation to 32 bits below is
   LLVM's, kept so that thresholds on densities and lifetimes mean the same
   thing for both toolchains.  */

#include "mib.h"

#include <string.h>

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

void
mib_init_one (struct memprof_mib *mib, uint64_t size, uint64_t access_count,
              uint32_t alloc_timestamp, uint32_t dealloc_timestamp,
              uint32_t alloc_cpu, uint32_t dealloc_cpu)
{
  /* LLVM passes the size as a u32: sizes of 4 GiB and more wrap.  */
  uint32_t size32 = (uint32_t) size;
  /* Readings of the runtime's clock in two threads may be a little out
     of order (runtime/ticker.c): never a negative lifetime.  */
  uint32_t lifetime = (int32_t) (dealloc_timestamp - alloc_timestamp) > 0
                          ? dealloc_timestamp - alloc_timestamp
                          : 0;
  uint64_t density;

  if (size32 == 0)
    size32 = 1;
  memset (mib, 0, sizeof *mib);
  mib->alloc_count = 1;
  mib->total_access_count = access_count;
  mib->min_access_count = access_count;
  mib->max_access_count = access_count;
  mib->total_size = size32;
  mib->min_size = size32;
  mib->max_size = size32;
  mib->alloc_timestamp = alloc_timestamp;
  mib->dealloc_timestamp = dealloc_timestamp;
  mib->total_lifetime = lifetime;
  mib->min_lifetime = lifetime;
  mib->max_lifetime = lifetime;
  density = access_count * 100 / size32;
  mib->total_access_density = density;
  mib->min_access_density = (uint32_t) density;
  mib->max_access_density = (uint32_t) density;
  /* Per second of lifetime, with 1 ms as the shortest lifetime.  */
  mib->total_lifetime_access_density
      = density * 1000 / (lifetime ? lifetime : 1);
  mib->min_lifetime_access_density
      = (uint32_t) mib->total_lifetime_access_density;
  mib->max_lifetime_access_density
      = (uint32_t) mib->total_lifetime_access_density;
  mib->alloc_cpu_id = alloc_cpu;
  mib->dealloc_cpu_id = dealloc_cpu;
  mib->num_migrated_cpu = alloc_cpu != dealloc_cpu;
}

void
mib_merge (struct memprof_mib *into, const struct memprof_mib *from)
{
  into->alloc_count += from->alloc_count;

  into->total_access_count += from->total_access_count;
  into->min_access_count = MIN (into->min_access_count, from->min_access_count);
  into->max_access_count = MAX (into->max_access_count, from->max_access_count);

  into->total_size += from->total_size;
  into->min_size = MIN (into->min_size, from->min_size);
  into->max_size = MAX (into->max_size, from->max_size);

  into->total_lifetime += from->total_lifetime;
  into->min_lifetime = MIN (into->min_lifetime, from->min_lifetime);
  into->max_lifetime = MAX (into->max_lifetime, from->max_lifetime);

  into->total_access_density += from->total_access_density;
  into->min_access_density
      = MIN (into->min_access_density, from->min_access_density);
  into->max_access_density
      = MAX (into->max_access_density, from->max_access_density);

  into->total_lifetime_access_density += from->total_lifetime_access_density;
  into->min_lifetime_access_density = MIN (into->min_lifetime_access_density,
                                           from->min_lifetime_access_density);
  into->max_lifetime_access_density = MAX (into->max_lifetime_access_density,
                                           from->max_lifetime_access_density);

  /* FROM was freed later: the lifetimes overlap when it was allocated
     before the previous one was freed.  */
  into->num_lifetime_overlaps
      += from->alloc_timestamp < into->dealloc_timestamp;
  into->alloc_timestamp = from->alloc_timestamp;
  into->dealloc_timestamp = from->dealloc_timestamp;

  into->num_same_alloc_cpu += into->alloc_cpu_id == from->alloc_cpu_id;
  into->num_same_dealloc_cpu += into->dealloc_cpu_id == from->dealloc_cpu_id;
  into->alloc_cpu_id = from->alloc_cpu_id;
  into->dealloc_cpu_id = from->dealloc_cpu_id;
  /* num_migrated_cpu keeps the first allocation's value, as in LLVM 19.  */

  into->access_histogram_size
      = MAX (into->access_histogram_size, from->access_histogram_size);
}

void
mib_scale (struct memprof_mib *mib, uint32_t weight)
{
  if (weight <= 1)
    return;
  mib->alloc_count *= weight;
  mib->total_access_count *= weight;
  mib->total_size *= weight;
  mib->total_lifetime *= weight;
  mib->total_access_density *= weight;
  mib->total_lifetime_access_density *= weight;
}

void
mib_histogram_merge (uint64_t *into, const uint64_t *from, uint32_t from_size)
{
  for (uint32_t i = 0; i < from_size; i++)
    into[i] += from[i];
}
