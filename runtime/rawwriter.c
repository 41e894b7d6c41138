/* The raw profile writer.  Layout (docs/profile-format.md):
     header | u64 #segments, segments | u64 #MIBs, (u64 id, MIB, histogram)*
            | u64 #stacks, (u64 id, u64 #pcs, pcs)*
   Every element is a multiple of 8 bytes, so no padding is needed.  The
   side file is a header, one record per MIB and one per granule of the
   program's data that was accessed (extraformat.h).  The
   writer hashes what reaches the file as it goes, so the side file can
   name its profile's bytes without reading them back.  */

#include "rawwriter.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

void
raw_writer_init (struct raw_writer *writer, int fd, char *buffer,
                 size_t capacity)
{
  writer->fd = fd;
  writer->buffer = buffer;
  writer->used = 0;
  writer->capacity = capacity;
  writer->written = 0;
  writer->hash = MEMPROF_FNV_OFFSET;
  writer->error = 0;
}

static void
drain (struct raw_writer *writer)
{
  size_t done = 0;
  while (done < writer->used && writer->error == 0)
    {
      ssize_t n
          = write (writer->fd, writer->buffer + done, writer->used - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          writer->error = n < 0 ? errno : EIO;
          break;
        }
      writer->hash = memprof_fnv1a (writer->hash, writer->buffer + done, n);
      done += n;
      writer->written += n;
    }
  writer->used = 0;
}

void
raw_writer_put (struct raw_writer *writer, const void *data, size_t size)
{
  const char *bytes = data;
  while (size > 0 && writer->error == 0)
    {
      size_t room = writer->capacity - writer->used;
      size_t chunk = size < room ? size : room;
      memcpy (writer->buffer + writer->used, bytes, chunk);
      writer->used += chunk;
      bytes += chunk;
      size -= chunk;
      if (writer->used == writer->capacity)
        drain (writer);
    }
}

int
raw_writer_flush (struct raw_writer *writer)
{
  drain (writer);
  return writer->error;
}

static void
put_u64 (struct raw_writer *writer, uint64_t value)
{
  raw_writer_put (writer, &value, sizeof value);
}

static uint64_t
mib_section_size (const struct raw_profile_record *records, size_t count,
                  uint64_t *written_records)
{
  uint64_t size = 8;
  *written_records = 0;
  for (size_t i = 0; i < count; i++)
    if (records[i].mib.alloc_count != 0)
      {
        size += 8 + MEMPROF_MIB_V4_SIZE
                + 8 * (uint64_t) records[i].mib.access_histogram_size;
        (*written_records)++;
      }
  return size;
}

static uint64_t
stack_section_size (const struct raw_profile_record *records, size_t count)
{
  uint64_t size = 8;
  for (size_t i = 0; i < count; i++)
    if (records[i].mib.alloc_count != 0)
      size += 16 + 8 * (uint64_t) records[i].depth;
  return size;
}

uint64_t
raw_profile_size (size_t segment_count,
                  const struct raw_profile_record *records, size_t record_count)
{
  uint64_t written;
  return MEMPROF_RAW_HEADER_SIZE + 8
         + MEMPROF_RAW_SEGMENT_SIZE * (uint64_t) segment_count
         + mib_section_size (records, record_count, &written)
         + stack_section_size (records, record_count);
}

int
raw_profile_write (struct raw_writer *writer,
                   const struct memprof_raw_segment *segments,
                   size_t segment_count,
                   const struct raw_profile_record *records,
                   size_t record_count)
{
  uint64_t written_records;
  uint64_t segment_bytes
      = 8 + MEMPROF_RAW_SEGMENT_SIZE * (uint64_t) segment_count;
  uint64_t mib_bytes
      = mib_section_size (records, record_count, &written_records);
  uint64_t stack_bytes = stack_section_size (records, record_count);
  struct memprof_raw_header header = {
    .magic = MEMPROF_RAW_MAGIC,
    .version = MEMPROF_RAW_VERSION,
    .total_size
    = MEMPROF_RAW_HEADER_SIZE + segment_bytes + mib_bytes + stack_bytes,
    .segment_offset = MEMPROF_RAW_HEADER_SIZE,
    .mib_offset = MEMPROF_RAW_HEADER_SIZE + segment_bytes,
    .stack_offset = MEMPROF_RAW_HEADER_SIZE + segment_bytes + mib_bytes,
  };

  raw_writer_put (writer, &header, sizeof header);
  put_u64 (writer, segment_count);
  raw_writer_put (writer, segments, MEMPROF_RAW_SEGMENT_SIZE * segment_count);

  put_u64 (writer, written_records);
  for (size_t i = 0; i < record_count; i++)
    {
      struct memprof_mib mib = records[i].mib;
      if (mib.alloc_count == 0)
        continue;
      mib.access_histogram = 0; /* a pointer in LLVM's files: meaningless */
      put_u64 (writer, records[i].id);
      raw_writer_put (writer, &mib, sizeof mib);
      raw_writer_put (writer, records[i].histogram,
                      8 * (size_t) mib.access_histogram_size);
    }

  put_u64 (writer, written_records);
  for (size_t i = 0; i < record_count; i++)
    {
      if (records[i].mib.alloc_count == 0)
        continue;
      put_u64 (writer, records[i].id);
      put_u64 (writer, records[i].depth);
      for (uint32_t j = 0; j < records[i].depth; j++)
        put_u64 (writer, records[i].pcs[j]);
    }
  return raw_writer_flush (writer);
}

int
raw_extra_write (struct raw_writer *writer, struct memprof_extra_header header,
                 const struct raw_profile_record *records,
                 const struct memprof_extra_record *extras, size_t record_count,
                 const struct memprof_extra_global *globals,
                 size_t global_count)
{
  return raw_extra_write_with_peak (writer, header, records, extras,
                                    record_count, globals, global_count, NULL,
                                    NULL, NULL);
}

int
raw_extra_write_with_peak (struct raw_writer *writer,
                           struct memprof_extra_header header,
                           const struct raw_profile_record *records,
                           const struct memprof_extra_record *extras,
                           size_t record_count,
                           const struct memprof_extra_global *globals,
                           size_t global_count,
                           const struct memprof_extra_peak *peak,
                           const struct memprof_extra_peak_context *contexts,
                           const struct memprof_extra_sample *samples)
{
  header.magic = MEMPROF_EXTRA_MAGIC;
  header.version
      = peak != NULL ? MEMPROF_EXTRA_VERSION : MEMPROF_EXTRA_VERSION_2;
  header.header_size = sizeof header;
  header.record_count = 0;
  header.global_count = global_count;
  for (size_t i = 0; i < record_count; i++)
    header.record_count += records[i].mib.alloc_count != 0;
  raw_writer_put (writer, &header, sizeof header);
  for (size_t i = 0; i < record_count; i++)
    {
      struct memprof_extra_record extra = extras[i];
      if (records[i].mib.alloc_count == 0)
        continue;
      extra.stack_id = records[i].id;
      raw_writer_put (writer, &extra, sizeof extra);
    }
  raw_writer_put (writer, globals, global_count * sizeof *globals);
  if (peak != NULL)
    {
      raw_writer_put (writer, peak, sizeof *peak);
      raw_writer_put (writer, contexts, peak->context_count * sizeof *contexts);
      raw_writer_put (writer, samples, peak->sample_count * sizeof *samples);
    }
  return raw_writer_flush (writer);
}
