/* Fuzz target: the .mprof reader (mprof_read, through profile_load_buffer:
   the header, zstd decompression and every section), and the round trip
   `memprof merge' relies on.  Whatever input loads must give a consistent
   model; written out with mprof_write, that file must load again, and
   written out once more give the same bytes.  An input that does not
   load must give a message naming it.  Seeds: corpus/mprof, files
   written by `memprof merge'.

   A mutation of the compressed bytes seldom decompresses to anything
   the sections' parsers have not seen, so half of the mutations are
   made to the payload instead (LLVMFuzzerCustomMutator below).  */

#include <zstd.h>

#include "fuzz.h"
#include "mprof.h"
#include "util.h"

static const char name[] = "fuzz.mprof";

/* libFuzzer's own mutator; weak, for the replay has none (and never
   calls the custom mutator).  */
size_t LLVMFuzzerMutate (uint8_t *data, size_t size, size_t max_size)
    __attribute__ ((weak));
size_t LLVMFuzzerCustomMutator (uint8_t *data, size_t size, size_t max_size,
                                unsigned int seed);

/* The largest payload the mutator decompresses.  */
#define MUTATOR_MAX_PAYLOAD (64 * 1024)

/* Half the time, mutate the bytes of the file as they are; the other
   half, when DATA is a .mprof file whose payload decompresses, mutate
   the payload and compress it again under a header that matches it.  */
size_t
LLVMFuzzerCustomMutator (uint8_t *data, size_t size, size_t max_size,
                         unsigned int seed)
{
  uint64_t magic = 0;
  if (size >= MPROF_HEADER_SIZE)
    memcpy (&magic, data, sizeof magic);
  if (seed % 2 == 0 || magic != MPROF_MAGIC)
    return LLVMFuzzerMutate (data, size, max_size);

  uint8_t *payload = malloc (MUTATOR_MAX_PAYLOAD);
  size_t payload_size
      = ZSTD_decompress (payload, MUTATOR_MAX_PAYLOAD, data + MPROF_HEADER_SIZE,
                         size - MPROF_HEADER_SIZE);
  if (ZSTD_isError (payload_size))
    {
      free (payload);
      return LLVMFuzzerMutate (data, size, max_size);
    }
  payload_size = LLVMFuzzerMutate (payload, payload_size, MUTATOR_MAX_PAYLOAD);

  size_t bound = ZSTD_compressBound (payload_size);
  uint8_t *compressed = malloc (bound);
  size_t compressed_size
      = ZSTD_compress (compressed, bound, payload, payload_size, 1);
  free (payload);
  if (ZSTD_isError (compressed_size)
      || MPROF_HEADER_SIZE + compressed_size > max_size)
    {
      free (compressed);
      return LLVMFuzzerMutate (data, size, max_size);
    }
  uint64_t sizes[2] = { payload_size, compressed_size };
  memcpy (data + 16, sizes, sizeof sizes);
  memcpy (data + MPROF_HEADER_SIZE, compressed, compressed_size);
  free (compressed);
  return MPROF_HEADER_SIZE + compressed_size;
}

/* Write PROFILE to PATH and map what was written into FILE.  */
static void
write_and_map (const struct profile *profile, const char *path,
               struct mapped_file *file)
{
  char error[512];
  if (mprof_write (profile, path, error, sizeof error) != 0)
    fuzz_fail ("mprof_write: %s", error);
  if (map_file (path, file, error, sizeof error) != 0)
    fuzz_fail ("%s", error);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  char error[512];
  struct profile first;
  profile_init (&first);
  error[0] = '\0';
  if (profile_load_buffer (&first, data, size, name, NULL, 0, NULL, error,
                           sizeof error)
      != 0)
    {
      fuzz_check_error (error, name);
      profile_free (&first);
      return 0;
    }
  fuzz_check_profile (&first);

  const char *first_path = fuzz_scratch_file ("first.mprof");
  const char *second_path = fuzz_scratch_file ("second.mprof");
  struct mapped_file written, rewritten;
  write_and_map (&first, first_path, &written);
  profile_free (&first);

  struct profile second;
  profile_init (&second);
  if (profile_load_buffer (&second, written.data, written.size, first_path,
                           NULL, 0, NULL, error, sizeof error)
      != 0)
    fuzz_fail ("what mprof_write wrote does not load: %s", error);
  fuzz_check_profile (&second);
  write_and_map (&second, second_path, &rewritten);
  profile_free (&second);
  if (written.size != rewritten.size
      || memcmp (written.data, rewritten.data, written.size) != 0)
    fuzz_fail ("written again, the .mprof changed (%zu bytes, then %zu)",
               written.size, rewritten.size);
  unmap_file (&written);
  unmap_file (&rewritten);
  return 0;
}
