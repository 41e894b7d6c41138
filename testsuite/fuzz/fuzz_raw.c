/* Fuzz target: the raw profile reader.  The input is a raw profile file
   (one or several profiles laid end to end).  It goes through
   raw_read_buffer, which must give either a file whose every record has
   its stack and histogram, or a message naming the input; then through
   profile_load_buffer, the whole path `memprof show PROFILE' takes, which
   folds each profile into the model (raw_read_each), and which must give
   either a consistent model or a message.  Seeds: corpus/raw.  */

#include "fuzz.h"
#include "rawreader.h"

static const char name[] = "fuzz.profraw";

static void
check_raw_file (const struct raw_read_file *file)
{
  volatile uint64_t sum = 0;
  for (size_t i = 0; i < file->profile_count; i++)
    {
      const struct raw_read_profile *profile = &file->profiles[i];
      if (profile->version < MEMPROF_RAW_OLDEST_VERSION
          || profile->version > MEMPROF_RAW_VERSION)
        fuzz_fail ("profile %zu has version %llu", i,
                   (unsigned long long) profile->version);
      for (size_t j = 0; j < profile->segment_count; j++)
        if (profile->segments[j].build_id_size > MEMPROF_RAW_BUILD_ID_MAX)
          fuzz_fail ("segment %zu: build id of %llu bytes", j,
                     (unsigned long long) profile->segments[j].build_id_size);
      for (size_t j = 0; j < profile->record_count; j++)
        {
          const struct raw_read_record *record = &profile->records[j];
          const struct raw_read_stack *stack
              = raw_read_find_stack (profile, record->id);
          if (stack == NULL)
            fuzz_fail ("record %zu: no stack with id %llu", j,
                       (unsigned long long) record->id);
          for (uint64_t k = 0; k < stack->depth; k++)
            sum += stack->pcs[k];
          if ((record->histogram == NULL)
              != (record->mib.access_histogram_size == 0))
            fuzz_fail ("record %zu: histogram size %u with%s values", j,
                       record->mib.access_histogram_size,
                       record->histogram ? "" : "out");
          for (uint32_t k = 0; k < record->mib.access_histogram_size; k++)
            sum += record->histogram[k];
        }
    }
  (void) sum;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  char error[512];
  struct raw_read_file file;
  error[0] = '\0';
  if (raw_read_buffer (data, size, name, &file, error, sizeof error) == 0)
    {
      check_raw_file (&file);
      raw_read_free (&file);
    }
  else
    fuzz_check_error (error, name);

  struct profile profile;
  profile_init (&profile);
  error[0] = '\0';
  if (profile_load_buffer (&profile, data, size, name, NULL, 0, NULL, error,
                           sizeof error)
      == 0)
    fuzz_check_profile (&profile);
  else
    fuzz_check_error (error, name);
  profile_free (&profile);
  return 0;
}
