/* Serializing a raw profile (LLVM MemProf raw version 4) and its side
   file (extraformat.h) through a fixed buffer onto a file descriptor.
   Pure: no allocation, no global state.  */

#ifndef MEMPROF_RAWWRITER_H
#define MEMPROF_RAWWRITER_H

#include <stddef.h>
#include <stdint.h>

#include "extraformat.h"
#include "mib.h"
#include "rawformat.h"

struct raw_writer
{
  int fd;
  char *buffer;
  size_t used, capacity;
  uint64_t written; /* bytes that reached the file */
  uint64_t hash;    /* memprof_fnv1a of those bytes */
  int error;        /* the first errno, 0 if none */
};

/* One allocation context to write.  Records whose mib.alloc_count is 0
   are not written.  */
struct raw_profile_record
{
  uint64_t id;
  struct memprof_mib mib;    /* access_histogram_size entries follow */
  const uint64_t *histogram; /* may be NULL when the size is 0 */
  uint32_t depth;
  const uintptr_t *pcs; /* leaf first, return address - 1 */
};

void raw_writer_init (struct raw_writer *writer, int fd, char *buffer,
                      size_t capacity);
void raw_writer_put (struct raw_writer *writer, const void *data, size_t size);
/* Returns 0, or the errno of the first failed write.  */
int raw_writer_flush (struct raw_writer *writer);

/* The size in bytes of the profile raw_profile_write would write.  */
uint64_t raw_profile_size (size_t segment_count,
                           const struct raw_profile_record *records,
                           size_t record_count);

/* Write one complete profile.  Returns 0 or an errno value.  */
int raw_profile_write (struct raw_writer *writer,
                       const struct memprof_raw_segment *segments,
                       size_t segment_count,
                       const struct raw_profile_record *records,
                       size_t record_count);

/* Write the side file (version 2) of the profile that raw_profile_write
   wrote from RECORDS: HEADER (the caller gives the profile's size and
   hash, the granule size, the reason and the timestamp; the magic,
   version, sizes and counts are set here), then for every record the
   profile holds (alloc_count not 0), in the same order, EXTRAS[i] with
   RECORDS[i]'s stack id, then the GLOBAL_COUNT records of GLOBALS as they
   are.  Returns 0 or an errno value.  */
int raw_extra_write (struct raw_writer *writer,
                     struct memprof_extra_header header,
                     const struct raw_profile_record *records,
                     const struct memprof_extra_record *extras,
                     size_t record_count,
                     const struct memprof_extra_global *globals,
                     size_t global_count);
/* The same with the heap's peak (version 3): PEAK, then its
   context_count CONTEXTS and sample_count SAMPLES; PEAK NULL writes
   version 2, as raw_extra_write.  */
int raw_extra_write_with_peak (
    struct raw_writer *writer, struct memprof_extra_header header,
    const struct raw_profile_record *records,
    const struct memprof_extra_record *extras, size_t record_count,
    const struct memprof_extra_global *globals, size_t global_count,
    const struct memprof_extra_peak *peak,
    const struct memprof_extra_peak_context *contexts,
    const struct memprof_extra_sample *samples);

#endif /* MEMPROF_RAWWRITER_H */
