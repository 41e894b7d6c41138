/* Fuzz target: the side file parser (formats/extraformat.h).  The input
   is a side file; it is loaded with profile_load_buffer next to a fixed,
   valid raw profile.  A side file names its profile by size and FNV-1a
   hash, which a random input never matches, so the target first writes
   the fixed profile's into the input's header (profile_size at offset 16,
   profile_hash at 24): the records are then parsed and folded in.

   Whatever the side file holds, the profile must load (a bad side file
   is ignored with a warning), with every context marked as having
   side-file data exactly when the side file was taken.  Seeds:
   corpus/side, the runtime's PROFILE.extra files.  */

#include <stddef.h>

#include "extraformat.h"
#include "fuzz.h"
#include "mib.h"
#include "rawformat.h"

/* The fixed profile's contexts: stack ids 1 to FIXED_CONTEXTS (the
   runtime numbers its stacks from 1 too), two frames each; the third
   has a histogram of FIXED_HISTOGRAM values.  */
#define FIXED_CONTEXTS 8
#define FIXED_HISTOGRAM 4
#define FIXED_SIZE                                                             \
  (MEMPROF_RAW_HEADER_SIZE + 8 + MEMPROF_RAW_SEGMENT_SIZE + 8                  \
   + FIXED_CONTEXTS * (8 + MEMPROF_MIB_V4_SIZE) + FIXED_HISTOGRAM * 8 + 8      \
   + FIXED_CONTEXTS * (16 + 2 * 8))

static uint8_t fixed[FIXED_SIZE];
static uint64_t fixed_hash;

static uint8_t *
put (uint8_t *at, const void *data, size_t size)
{
  memcpy (at, data, size);
  return at + size;
}

static uint8_t *
put_u64 (uint8_t *at, uint64_t value)
{
  return put (at, &value, sizeof value);
}

static void
build_fixed_profile (void)
{
  struct memprof_raw_header header
      = { .magic = MEMPROF_RAW_MAGIC,
          .version = MEMPROF_RAW_VERSION,
          .total_size = FIXED_SIZE,
          .segment_offset = MEMPROF_RAW_HEADER_SIZE };
  struct memprof_raw_segment segment
      = { .start = 0x1000, .end = 0x5000, .build_id_size = 20 };
  uint8_t *at = fixed + MEMPROF_RAW_HEADER_SIZE;

  memset (segment.build_id, 0xab, 20);
  at = put_u64 (at, 1);
  at = put (at, &segment, sizeof segment);

  header.mib_offset = at - fixed;
  at = put_u64 (at, FIXED_CONTEXTS);
  for (uint64_t id = 1; id <= FIXED_CONTEXTS; id++)
    {
      struct memprof_mib mib;
      mib_init_one (&mib, 16 * id, id - 1, 10, 20, 0, 1);
      if (id == 3)
        mib.access_histogram_size = FIXED_HISTOGRAM;
      at = put_u64 (at, id);
      at = put (at, &mib, sizeof mib);
      for (uint32_t i = 0; i < mib.access_histogram_size; i++)
        at = put_u64 (at, i);
    }

  header.stack_offset = at - fixed;
  at = put_u64 (at, FIXED_CONTEXTS);
  for (uint64_t id = 1; id <= FIXED_CONTEXTS; id++)
    {
      at = put_u64 (at, id);
      at = put_u64 (at, 2);
      at = put_u64 (at, 0x1100 + 16 * id);
      at = put_u64 (at, 0x2200);
    }
  if (at != fixed + FIXED_SIZE)
    fuzz_fail ("the fixed profile is %zu bytes, not %d", (size_t) (at - fixed),
               FIXED_SIZE);
  memcpy (fixed, &header, sizeof header);
  fixed_hash = memprof_fnv1a (MEMPROF_FNV_OFFSET, fixed, FIXED_SIZE);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static const char name[] = "fixed.profraw";
  char error[512];

  if (fixed_hash == 0)
    build_fixed_profile ();

  /* A copy of exactly SIZE bytes, so that a read past it is caught.  */
  uint8_t *side = malloc (size ? size : 1);
  memcpy (side, data, size);
  if (size >= offsetof (struct memprof_extra_header, profile_hash) + 8)
    {
      uint64_t profile_size = FIXED_SIZE;
      memcpy (side + offsetof (struct memprof_extra_header, profile_size),
              &profile_size, 8);
      memcpy (side + offsetof (struct memprof_extra_header, profile_hash),
              &fixed_hash, 8);
    }

  struct profile profile;
  profile_init (&profile);
  error[0] = '\0';
  if (profile_load_buffer (&profile, fixed, FIXED_SIZE, name, side, size,
                           "fuzz.profraw.extra", error, sizeof error)
      != 0)
    fuzz_fail ("a side file made its valid profile fail to load: %s", error);
  fuzz_check_profile (&profile);
  if (profile.context_count != FIXED_CONTEXTS)
    fuzz_fail ("%zu contexts loaded, not %d", profile.context_count,
               FIXED_CONTEXTS);
  for (size_t i = 0; i < profile.context_count; i++)
    if (profile.contexts[i].has_extra != profile.inputs_with_extra)
      fuzz_fail ("context %zu: has_extra %u, but %llu side files were taken", i,
                 profile.contexts[i].has_extra,
                 (unsigned long long) profile.inputs_with_extra);
  profile_free (&profile);
  free (side);
  return 0;
}
