/* See mibfields.h.  */

#include "mibfields.h"

#include <string.h>

#define FIELD(name, member)                                                    \
  {                                                                            \
#name, offsetof(struct memprof_mib, member),                               \
        sizeof(((struct memprof_mib *) 0)->member)                             \
  }

static const struct
{
  const char *name;
  size_t offset, size;
} fields[] = {
  FIELD (AllocCount, alloc_count),
  FIELD (TotalAccessCount, total_access_count),
  FIELD (MinAccessCount, min_access_count),
  FIELD (MaxAccessCount, max_access_count),
  FIELD (TotalSize, total_size),
  FIELD (MinSize, min_size),
  FIELD (MaxSize, max_size),
  FIELD (AllocTimestamp, alloc_timestamp),
  FIELD (DeallocTimestamp, dealloc_timestamp),
  FIELD (TotalLifetime, total_lifetime),
  FIELD (MinLifetime, min_lifetime),
  FIELD (MaxLifetime, max_lifetime),
  FIELD (AllocCpuId, alloc_cpu_id),
  FIELD (DeallocCpuId, dealloc_cpu_id),
  FIELD (NumMigratedCpu, num_migrated_cpu),
  FIELD (NumLifetimeOverlaps, num_lifetime_overlaps),
  FIELD (NumSameAllocCpu, num_same_alloc_cpu),
  FIELD (NumSameDeallocCpu, num_same_dealloc_cpu),
  FIELD (DataTypeId, data_type_id),
  FIELD (TotalAccessDensity, total_access_density),
  FIELD (MinAccessDensity, min_access_density),
  FIELD (MaxAccessDensity, max_access_density),
  FIELD (TotalLifetimeAccessDensity, total_lifetime_access_density),
  FIELD (MinLifetimeAccessDensity, min_lifetime_access_density),
  FIELD (MaxLifetimeAccessDensity, max_lifetime_access_density),
  FIELD (AccessHistogramSize, access_histogram_size),
};

const size_t mib_field_count = sizeof fields / sizeof fields[0];

const char *
mib_field_name (size_t field)
{
  return fields[field].name;
}

uint64_t
mib_field_value (const struct memprof_mib *mib, size_t field)
{
  const char *at = (const char *) mib + fields[field].offset;
  if (fields[field].size == 4)
    {
      uint32_t value;
      memcpy (&value, at, sizeof value);
      return value;
    }
  uint64_t value;
  memcpy (&value, at, sizeof value);
  return value;
}

void
mib_field_set (struct memprof_mib *mib, size_t field, uint64_t value)
{
  char *at = (char *) mib + fields[field].offset;
  if (fields[field].size == 4)
    {
      uint32_t narrow = (uint32_t) value;
      memcpy (at, &narrow, sizeof narrow);
    }
  else
    memcpy (at, &value, sizeof value);
}
