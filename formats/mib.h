/* The MemInfoBlock: what LLVM MemProf records per allocation context,
   laid out byte for byte as in a raw profile of version 4 (144 bytes,
   packed, little-endian), with LLVM 19's arithmetic for one allocation
   and for merging two.  Shared by the runtime (which folds allocations
   into it) and by the analysis (which merges profiles).  */

#ifndef MEMPROF_MIB_H
#define MEMPROF_MIB_H

#include <stddef.h>
#include <stdint.h>

struct memprof_mib
{
  uint32_t alloc_count;
  uint64_t total_access_count;
  uint64_t min_access_count;
  uint64_t max_access_count;
  uint64_t total_size;
  uint32_t min_size;
  uint32_t max_size;
  uint32_t alloc_timestamp;   /* ms since the runtime started */
  uint32_t dealloc_timestamp; /* ms since the runtime started */
  uint64_t total_lifetime;    /* ms */
  uint32_t min_lifetime;
  uint32_t max_lifetime;
  uint32_t alloc_cpu_id;
  uint32_t dealloc_cpu_id;
  uint32_t num_migrated_cpu;
  uint32_t num_lifetime_overlaps;
  uint32_t num_same_alloc_cpu;
  uint32_t num_same_dealloc_cpu;
  uint64_t data_type_id;
  uint64_t total_access_density; /* accesses per byte, x100 */
  uint32_t min_access_density;
  uint32_t max_access_density;
  uint64_t total_lifetime_access_density; /* accesses per byte per s, x100 */
  uint32_t min_lifetime_access_density;
  uint32_t max_lifetime_access_density;
  uint32_t access_histogram_size; /* entries that follow the block on disk */
  uint64_t access_histogram;      /* a pointer in LLVM's files; 0 in ours */
} __attribute__ ((packed));

/* The size of the block in raw version 4, and in version 3 (which ends
   before access_histogram_size).  */
#define MEMPROF_MIB_V4_SIZE 144
#define MEMPROF_MIB_V3_SIZE 132

#ifdef __cplusplus
/* The GCC plugin (C++) reads MIBs too.  */
#define _Static_assert static_assert
#endif
_Static_assert(sizeof (struct memprof_mib) == MEMPROF_MIB_V4_SIZE,
               "memprof_mib must match LLVM's packed MemInfoBlock");

/* Fill MIB for one allocation of SIZE bytes (0 counts as 1, as in LLVM)
   that saw ACCESS_COUNT accesses between the two timestamps, on the two
   CPUs.  The histogram fields are left empty.  */
void mib_init_one (struct memprof_mib *mib, uint64_t size,
                   uint64_t access_count, uint32_t alloc_timestamp,
                   uint32_t dealloc_timestamp, uint32_t alloc_cpu,
                   uint32_t dealloc_cpu);

/* Merge FROM into INTO as LLVM's MemInfoBlock::Merge does, FROM being the
   allocation that was freed later.  access_histogram_size becomes the
   larger of the two; the histogram values are merged by the caller with
   mib_histogram_merge.  */
void mib_merge (struct memprof_mib *into, const struct memprof_mib *from);

/* Make MIB, the record of one sampled allocation, stand for WEIGHT
   allocations: every Total field and AllocCount are multiplied, so the
   means (Total / AllocCount) stay those of the sample; Min and Max stay
   as they are.  */
void mib_scale (struct memprof_mib *mib, uint32_t weight);

/* Add the FROM_SIZE values of FROM into INTO element by element; INTO must
   hold at least FROM_SIZE values (the longer histogram is kept).  */
void mib_histogram_merge (uint64_t *into, const uint64_t *from,
                          uint32_t from_size);

#endif /* MEMPROF_MIB_H */
