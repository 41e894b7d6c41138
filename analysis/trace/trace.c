/* See trace.h.  The reader decompresses the file as a stream and parses
   each block as soon as it is whole, so memory follows the number of
   calls, not the size of the decompressed data.  */

#include "trace.h"

#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "util.h"

/* ---- Names ---- */

static const char *const op_names[MEMPROF_TRACE_OP_COUNT] = {
  [MEMPROF_TRACE_MALLOC] = "malloc",
  [MEMPROF_TRACE_CALLOC] = "calloc",
  [MEMPROF_TRACE_REALLOC] = "realloc",
  [MEMPROF_TRACE_FREE] = "free",
  [MEMPROF_TRACE_ALIGNED_ALLOC] = "aligned_alloc",
  [MEMPROF_TRACE_POSIX_MEMALIGN] = "posix_memalign",
  [MEMPROF_TRACE_MEMALIGN] = "memalign",
  [MEMPROF_TRACE_VALLOC] = "valloc",
  [MEMPROF_TRACE_PVALLOC] = "pvalloc",
  [MEMPROF_TRACE_REALLOCARRAY] = "reallocarray",
  [MEMPROF_TRACE_NEW] = "new",
  [MEMPROF_TRACE_NEW_ARRAY] = "new[]",
  [MEMPROF_TRACE_DELETE] = "delete",
  [MEMPROF_TRACE_DELETE_ARRAY] = "delete[]",
};

const char *
trace_op_name (unsigned op)
{
  return op > 0 && op < MEMPROF_TRACE_OP_COUNT ? op_names[op] : "?";
}

bool
trace_op_allocates (unsigned op)
{
  return op > 0 && op < MEMPROF_TRACE_OP_COUNT
         && memprof_trace_op_returns_pointer (op)
         && !memprof_trace_op_is_realloc (op);
}

uint64_t
trace_requested_bytes (const struct memprof_trace_record *record)
{
  uint64_t bytes;
  if (record->op == MEMPROF_TRACE_CALLOC)
    return __builtin_mul_overflow (record->size, record->extra, &bytes)
               ? UINT64_MAX
               : bytes;
  return record->size;
}

/* ---- Reading ---- */

/* Past this many decompressed bytes a trace is refused (the fuzz targets
   lower it; a real trace of a day's run fits).  */
uint64_t trace_read_limit = UINT64_MAX;

struct reader
{
  const char *name;
  char *error;
  size_t error_size;
  struct trace_file *trace;
  size_t call_capacity;
  uint64_t offset; /* of the next unparsed byte, in the decompressed data */
  bool header_read, end_read;
  unsigned last_kind;
};

static int fail (struct reader *reader, uint64_t offset, const char *format,
                 ...) __attribute__ ((format (printf, 3, 4)));

static int
fail (struct reader *reader, uint64_t offset, const char *format, ...)
{
  char what[400];
  va_list args;
  va_start (args, format);
  vsnprintf (what, sizeof what, format, args);
  va_end (args);
  snprintf (reader->error, reader->error_size,
            "%s: byte %llu of the decompressed trace: %s", reader->name,
            (unsigned long long) offset, what);
  return -1;
}

static bool
get_zigzag (const uint8_t **p, const uint8_t *end, uint64_t previous,
            uint64_t *value)
{
  uint64_t raw;
  if (!varint_get (p, end, &raw))
    return false;
  *value = previous + ((raw >> 1) ^ (0 - (raw & 1)));
  return true;
}

static uint64_t
unzigzag (uint64_t raw)
{
  return (raw >> 1) ^ (0 - (raw & 1));
}

/* The COUNT records of thread TID, encoded column by column in the SIZE
   bytes at DATA (traceformat.h).  */
static int
parse_records (struct reader *reader, uint32_t tid, uint32_t count,
               const uint8_t *data, uint32_t size)
{
  struct trace_file *trace = reader->trace;
  const uint8_t *p = data, *end = data + size;
  bool stacks = trace->header.flags & MEMPROF_TRACE_FLAG_STACKS;
  const char *column = "";
  uint64_t previous, value;
  uint32_t i = 0;

  if (trace->call_count + count > reader->call_capacity)
    {
      size_t capacity = reader->call_capacity ? reader->call_capacity : 1024;
      while (capacity < trace->call_count + count)
        capacity *= 2;
      trace->calls = xrealloc (trace->calls, capacity * sizeof *trace->calls);
      reader->call_capacity = capacity;
    }
  struct trace_call *calls = &trace->calls[trace->call_count];
#define AT(q) (reader->offset + (uint64_t) ((q) -data))
#define RECORD(i) (&calls[i].record)
  memset (calls, 0, count * sizeof *calls);
  for (i = 0; i < count; i++, p++)
    {
      calls[i].thread = tid; /* an id until the calls are sorted */
      RECORD (i)->op = *p & 0x0f;
      RECORD (i)->flags = (*p >> 4) & 0x0f;
      if (RECORD (i)->op == 0 || RECORD (i)->op >= MEMPROF_TRACE_OP_COUNT
          || (*p & 0x80) != 0)
        return fail (reader, AT (p),
                     "record %u of thread %u: an operation (1 to %d, flags "
                     "below 8) expected, found byte 0x%02x",
                     i, tid, MEMPROF_TRACE_OP_COUNT - 1, *p);
    }
  column = "sequence numbers";
  for (i = 0, previous = 0; i < count; previous = RECORD (i++)->sequence)
    {
      const uint8_t *at = p;
      if (!get_zigzag (&p, end, previous, &RECORD (i)->sequence))
        goto bad_varint;
      if (RECORD (i)->sequence <= previous)
        return fail (reader, AT (at),
                     "record %u of thread %u: a sequence number above %llu "
                     "expected (a thread's calls come in order), found %llu",
                     i, tid, (unsigned long long) previous,
                     (unsigned long long) RECORD (i)->sequence);
    }
  column = "time stamps";
  for (i = 0, previous = 0; i < count; previous = RECORD (i++)->timestamp)
    if (!get_zigzag (&p, end, previous, &RECORD (i)->timestamp))
      goto bad_varint;
  /* Pointers and results, as differences first: the previous address
     runs through both columns, in record order.  */
  column = "pointers";
  for (i = 0; i < count; i++)
    if (memprof_trace_op_takes_pointer (RECORD (i)->op)
        && !varint_get (&p, end, &RECORD (i)->pointer))
      goto bad_varint;
  column = "results";
  for (i = 0; i < count; i++)
    if (memprof_trace_op_returns_pointer (RECORD (i)->op)
        && !varint_get (&p, end, &RECORD (i)->result))
      goto bad_varint;
  for (i = 0, previous = 0; i < count; i++)
    {
      struct memprof_trace_record *record = RECORD (i);
      if (memprof_trace_op_takes_pointer (record->op))
        {
          record->pointer = previous + unzigzag (record->pointer);
          if (record->pointer != 0)
            previous = record->pointer;
        }
      if (memprof_trace_op_returns_pointer (record->op))
        {
          record->result = previous + unzigzag (record->result);
          if (record->result != 0)
            previous = record->result;
        }
    }
  column = "sizes";
  for (i = 0; i < count; i++)
    if (!varint_get (&p, end, &RECORD (i)->size))
      goto bad_varint;
  column = "extra fields";
  for (i = 0; i < count; i++)
    {
      struct memprof_trace_record *record = RECORD (i);
      const uint8_t *at = p;
      if (!varint_get (&p, end, &value))
        goto bad_varint;
      if (memprof_trace_op_is_realloc (record->op))
        {
          if (value == 0 || value >= record->sequence)
            return fail (reader, AT (at),
                         "record %u of thread %u: a realloc's sequence "
                         "number before the call (1 to %llu) expected",
                         i, tid, (unsigned long long) record->sequence - 1);
          value = record->sequence - value;
        }
      record->extra = value;
    }
  column = "usable sizes";
  for (i = 0; i < count; i++)
    if (!get_zigzag (&p, end, RECORD (i)->size, &RECORD (i)->usable))
      goto bad_varint;
  column = "stack ids";
  if (stacks)
    for (i = 0; i < count; i++)
      {
        const uint8_t *at = p;
        if (!varint_get (&p, end, &value))
          goto bad_varint;
        if (value > UINT32_MAX)
          return fail (reader, AT (at),
                       "record %u of thread %u: a stack id below 2^32 "
                       "expected",
                       i, tid);
        RECORD (i)->stack_id = (uint32_t) value;
      }
  if (p != end)
    return fail (reader, AT (p),
                 "block of thread %u: its %u records end %u bytes before "
                 "the block's size (%u bytes)",
                 tid, count, (unsigned) (end - p), size);
  trace->call_count += count;
  return 0;
bad_varint:
  if (p == end)
    return fail (reader, AT (end),
                 "block of thread %u: %u records in %u bytes expected, the "
                 "bytes end in the column of %s, at record %u",
                 tid, count, size, column, i);
  return fail (reader, AT (p),
               "record %u of thread %u: %s: a varint of at most 10 bytes "
               "expected",
               i, tid, column);
#undef AT
#undef RECORD
}

/* Parse what is whole in DATA (SIZE bytes); *USED gets the bytes
   parsed.  */
/* Thread TID is named by the 16 bytes at NAME (the last name wins).  */
static void
note_thread_name (struct trace_file *trace, uint32_t tid, const uint8_t *name)
{
  struct trace_thread_name *entry = NULL;
  for (size_t i = 0; i < trace->name_count && entry == NULL; i++)
    if (trace->names[i].tid == tid)
      entry = &trace->names[i];
  if (entry == NULL)
    {
      if (trace->name_count == trace->name_capacity)
        {
          trace->name_capacity
              = trace->name_capacity ? 2 * trace->name_capacity : 16;
          trace->names = xrealloc (trace->names,
                                   trace->name_capacity * sizeof *trace->names);
        }
      entry = &trace->names[trace->name_count++];
      entry->tid = tid;
    }
  memcpy (entry->name, name, sizeof entry->name);
  entry->name[sizeof entry->name - 1] = '\0';
}

const char *
trace_thread_name (const struct trace_file *trace, uint32_t thread)
{
  if (thread >= trace->thread_count)
    return "";
  for (size_t i = 0; i < trace->name_count; i++)
    if (trace->names[i].tid == trace->threads[thread])
      return trace->names[i].name;
  return "";
}

static int
parse (struct reader *reader, const uint8_t *data, size_t size, size_t *used)
{
  struct trace_file *trace = reader->trace;
  size_t at = 0;

  *used = 0;
  if (!reader->header_read)
    {
      struct memprof_trace_header header;
      if (size < sizeof header)
        return 0;
      memcpy (&header, data, sizeof header);
      if (header.magic != MEMPROF_TRACE_MAGIC)
        return fail (reader, 0,
                     "the trace's magic number expected (this is a zstd "
                     "file, but not a memprof trace)");
      if (header.version != MEMPROF_TRACE_VERSION
          && header.version != MEMPROF_TRACE_VERSION_1)
        return fail (reader, 8,
                     "version %d or %d expected, found %u (a newer memprof "
                     "wrote it?)",
                     MEMPROF_TRACE_VERSION_1, MEMPROF_TRACE_VERSION,
                     header.version);
      if (header.header_size != sizeof header
          || header.record_size != sizeof (struct memprof_trace_record)
          || (header.flags & ~MEMPROF_TRACE_FLAG_STACKS) != 0
          || header.reserved0 != 0 || header.reserved1 != 0)
        return fail (reader, 12,
                     "a header of 64 bytes with records of 64, flags 0 or "
                     "1 and reserved fields 0 expected");
      trace->header = header;
      trace->last_tsc = header.start_tsc;
      trace->last_monotonic = header.start_monotonic;
      reader->header_read = true;
      reader->offset = sizeof header;
      at = sizeof header;
    }
  for (;;)
    {
      struct memprof_trace_block block;
      size_t payload;
      if (size - at < sizeof block)
        break;
      memcpy (&block, data + at, sizeof block);
      if (reader->end_read)
        return fail (reader, reader->offset,
                     "nothing after the end block expected, found more data");
      switch (block.kind)
        {
        case MEMPROF_TRACE_BLOCK_RECORDS:
          if (block.count == 0 || block.count > MEMPROF_TRACE_BLOCK_RECORDS_MAX
              || block.size < block.count
              || block.size > MEMPROF_TRACE_BLOCK_SIZE_MAX)
            return fail (reader, reader->offset,
                         "a block of 1 to %d records in at most %u bytes "
                         "expected, found %u records in %u bytes",
                         MEMPROF_TRACE_BLOCK_RECORDS_MAX,
                         MEMPROF_TRACE_BLOCK_SIZE_MAX, block.count, block.size);
          payload = block.size;
          break;
        case MEMPROF_TRACE_BLOCK_CLOCK:
        case MEMPROF_TRACE_BLOCK_SYNC:
          payload = sizeof (struct memprof_trace_clock);
          break;
        case MEMPROF_TRACE_BLOCK_END:
          payload = sizeof (struct memprof_trace_end);
          break;
        case MEMPROF_TRACE_BLOCK_THREAD:
          if (trace->header.version == MEMPROF_TRACE_VERSION_1)
            return fail (reader, reader->offset,
                         "a block kind (1 records, 2 clock, 3 sync, 4 end) "
                         "expected in a version 1 trace, found a thread "
                         "name (5)");
          if (block.thread == 0 || block.count != 0
              || block.size != sizeof (struct memprof_trace_thread))
            return fail (reader, reader->offset,
                         "a thread name block with a thread id, count 0 "
                         "and size %zu expected",
                         sizeof (struct memprof_trace_thread));
          payload = sizeof (struct memprof_trace_thread);
          break;
        default:
          return fail (reader, reader->offset,
                       "a block kind (1 records, 2 clock, 3 sync, 4 end, "
                       "5 thread name) expected, found %u",
                       block.kind);
        }
      if (block.kind != MEMPROF_TRACE_BLOCK_RECORDS
          && block.kind != MEMPROF_TRACE_BLOCK_THREAD
          && (block.thread != 0 || block.count != 0 || block.size != 0))
        return fail (reader, reader->offset,
                     "a %s block with thread, count and size 0 expected",
                     block.kind == MEMPROF_TRACE_BLOCK_END ? "end" : "clock");
      if (size - at - sizeof block < payload)
        break;
      const uint8_t *body = data + at + sizeof block;
      reader->offset += sizeof block;
      if (block.kind == MEMPROF_TRACE_BLOCK_RECORDS)
        {
          if (parse_records (reader, block.thread, block.count, body,
                             block.size)
              != 0)
            return -1;
        }
      else if (block.kind == MEMPROF_TRACE_BLOCK_THREAD)
        note_thread_name (trace, block.thread, body);
      else if (block.kind == MEMPROF_TRACE_BLOCK_END)
        {
          memcpy (&trace->end, body, sizeof trace->end);
          trace->last_tsc = trace->end.tsc;
          trace->last_monotonic = trace->end.monotonic;
          if (trace->end.record_count != trace->call_count)
            return fail (reader, reader->offset,
                         "the end block counts %llu calls, the blocks before "
                         "it hold %zu",
                         (unsigned long long) trace->end.record_count,
                         trace->call_count);
          reader->end_read = true;
        }
      else
        {
          struct memprof_trace_clock clock;
          memcpy (&clock, body, sizeof clock);
          trace->last_tsc = clock.tsc;
          trace->last_monotonic = clock.monotonic;
        }
      reader->last_kind = block.kind;
      reader->offset += payload;
      at += sizeof block + payload;
    }
  *used = at;
  return 0;
}

static int
compare_calls (const void *a, const void *b)
{
  uint64_t x = ((const struct trace_call *) a)->record.sequence;
  uint64_t y = ((const struct trace_call *) b)->record.sequence;
  return x < y ? -1 : x > y;
}

/* Sort the calls, check their sequence numbers are distinct, and number
   the threads in order of their first call.  */
static int
order_calls (struct reader *reader)
{
  struct trace_file *trace = reader->trace;
  size_t capacity = 16, mask;
  uint32_t *ids, *indices;

  qsort (trace->calls, trace->call_count, sizeof *trace->calls, compare_calls);
  for (size_t i = 1; i < trace->call_count; i++)
    if (trace->calls[i].record.sequence == trace->calls[i - 1].record.sequence)
      {
        snprintf (reader->error, reader->error_size,
                  "%s: sequence number %llu is used by two calls (each call "
                  "has its own)",
                  reader->name,
                  (unsigned long long) trace->calls[i].record.sequence);
        return -1;
      }
  /* tid -> index, open addressing; key 0 is free (tid 0 is the
     scheduler's, never a user thread; mapped to 0xffffffff here).  */
  while (capacity < trace->call_count * 2 + 16 && capacity < (1u << 26))
    capacity *= 2;
  mask = capacity - 1;
  ids = xcalloc (capacity, sizeof *ids);
  indices = xcalloc (capacity, sizeof *indices);
  trace->threads = NULL;
  trace->thread_count = 0;
  size_t thread_capacity = 0;
  for (size_t i = 0; i < trace->call_count; i++)
    {
      uint32_t key
          = trace->calls[i].thread ? trace->calls[i].thread : 0xffffffffu;
      size_t slot = (key * 2654435761u) & mask;
      while (ids[slot] != 0 && ids[slot] != key)
        slot = (slot + 1) & mask;
      if (ids[slot] == 0)
        {
          if (trace->thread_count == thread_capacity)
            {
              thread_capacity = thread_capacity ? 2 * thread_capacity : 16;
              trace->threads = xrealloc (trace->threads,
                                         thread_capacity * sizeof (uint32_t));
            }
          ids[slot] = key;
          indices[slot] = (uint32_t) trace->thread_count;
          trace->threads[trace->thread_count++] = trace->calls[i].thread;
        }
      trace->calls[i].thread = indices[slot];
    }
  free (ids);
  free (indices);
  return 0;
}

int
trace_read_buffer (const uint8_t *data, size_t size, const char *name,
                   struct trace_file *trace, char *error, size_t error_size)
{
  struct reader reader = {
    .name = name, .error = error, .error_size = error_size, .trace = trace
  };
  ZSTD_DCtx *dctx = ZSTD_createDCtx ();
  size_t capacity = 1 << 20, filled = 0, last = 1;
  uint8_t *window = xmalloc (capacity);
  ZSTD_inBuffer in = { data, size, 0 };
  int status = -1;

  memset (trace, 0, sizeof *trace);
  trace->compressed_size = size;
  if (dctx == NULL)
    die (1, "out of memory for zstd");
  if (size == 0)
    {
      snprintf (error, error_size,
                "%s: byte 0: empty: a zstd-compressed memprof trace expected",
                name);
      goto done;
    }
  while (in.pos < in.size || last == 0)
    {
      ZSTD_outBuffer out = { window + filled, capacity - filled, 0 };
      size_t before = in.pos;
      if (last == 0 && in.pos < in.size)
        {
          snprintf (error, error_size,
                    "%s: byte %zu: the end of the file expected after the "
                    "zstd frame, found %zu more bytes",
                    name, in.pos, in.size - in.pos);
          goto done;
        }
      if (last == 0)
        break;
      last = ZSTD_decompressStream (dctx, &out, &in);
      if (ZSTD_isError (last))
        {
          snprintf (error, error_size,
                    "%s: byte %zu: zstd-compressed trace data expected: %s",
                    name, before, ZSTD_getErrorName (last));
          goto done;
        }
      filled += out.pos;
      trace->decompressed_size += out.pos;
      if (trace->decompressed_size > trace_read_limit)
        {
          snprintf (error, error_size,
                    "%s: decompresses to more than %llu bytes: refused", name,
                    (unsigned long long) trace_read_limit);
          goto done;
        }
      size_t used;
      if (parse (&reader, window, filled, &used) != 0)
        goto done;
      memmove (window, window + used, filled - used);
      filled -= used;
      if (filled == capacity)
        {
          /* A block larger than the window: grow it (blocks are at most
             MEMPROF_TRACE_BLOCK_SIZE_MAX bytes, checked by parse).  */
          capacity *= 2;
          window = xrealloc (window, capacity);
        }
      if (out.pos == 0 && in.pos == before && last != 0)
        break; /* no progress: the input is exhausted */
    }
  if (!reader.header_read)
    {
      snprintf (error, error_size,
                "%s: byte %zu: truncated: the trace's 64-byte header "
                "expected, the data ends after %llu bytes",
                name, size, (unsigned long long) trace->decompressed_size);
      goto done;
    }
  if (filled > 0)
    {
      fail (&reader, reader.offset,
            "truncated: the rest of a block expected, the data ends %zu "
            "bytes into it",
            filled);
      goto done;
    }
  if (!reader.end_read)
    {
      if (last != 0 && reader.last_kind == MEMPROF_TRACE_BLOCK_SYNC)
        trace->synced_only = true;
      else
        {
          snprintf (error, error_size,
                    "%s: byte %zu: truncated: the trace's end block "
                    "expected (the file ends after %llu bytes of trace "
                    "data%s)",
                    name, size, (unsigned long long) reader.offset,
                    last != 0 ? ", inside its zstd frame" : "");
          goto done;
        }
    }
  else if (last != 0)
    {
      snprintf (error, error_size,
                "%s: byte %zu: truncated: the end of the zstd frame "
                "expected after the end block",
                name, size);
      goto done;
    }
  trace->complete = reader.end_read;
  status = order_calls (&reader);
done:
  free (window);
  ZSTD_freeDCtx (dctx);
  if (status != 0)
    trace_free (trace);
  return status;
}

int
trace_read (const char *path, struct trace_file *trace, char *error,
            size_t error_size)
{
  struct mapped_file file;
  memset (trace, 0, sizeof *trace);
  if (map_file (path, &file, error, error_size) != 0)
    return -1;
  int status = trace_read_buffer (file.data, file.size, path, trace, error,
                                  error_size);
  unmap_file (&file);
  return status;
}

void
trace_free (struct trace_file *trace)
{
  free (trace->calls);
  free (trace->threads);
  free (trace->names);
  trace->names = NULL;
  trace->name_count = trace->name_capacity = 0;
  trace->calls = NULL;
  trace->threads = NULL;
  trace->call_count = trace->thread_count = 0;
}

double
trace_tsc_hz (const struct trace_file *trace)
{
  if (trace->last_monotonic <= trace->header.start_monotonic + 1000000
      || trace->last_tsc <= trace->header.start_tsc)
    return 0;
  return (double) (trace->last_tsc - trace->header.start_tsc) * 1e9
         / (double) (trace->last_monotonic - trace->header.start_monotonic);
}

double
trace_ns_of (const struct trace_file *trace, uint64_t tsc)
{
  double hz = trace_tsc_hz (trace);
  if (hz <= 0)
    hz = 1e9; /* too short to tell: about 1 GHz, only for display */
  return ((double) tsc - (double) trace->header.start_tsc) * 1e9 / hz;
}

/* ---- The model ---- */

/* u64 -> u64, open addressing; key 0 is never stored.  */
struct u64_map
{
  uint64_t *keys, *values;
  size_t capacity, count;
};

#define MAP_NONE 0
#define MAP_FREED UINT64_MAX

static size_t
map_find (const struct u64_map *map, uint64_t key)
{
  size_t mask = map->capacity - 1;
  size_t slot = (size_t) ((key * 0x9e3779b97f4a7c15ULL) >> 17) & mask;
  while (map->keys[slot] != 0 && map->keys[slot] != key)
    slot = (slot + 1) & mask;
  return slot;
}

static uint64_t
map_get (const struct u64_map *map, uint64_t key)
{
  if (map->capacity == 0)
    return MAP_NONE;
  size_t slot = map_find (map, key);
  return map->keys[slot] == key ? map->values[slot] : MAP_NONE;
}

static void
map_put (struct u64_map *map, uint64_t key, uint64_t value)
{
  if ((map->count + 1) * 2 > map->capacity)
    {
      struct u64_map grown
          = { NULL, NULL, map->capacity ? map->capacity * 2 : 1024, 0 };
      grown.keys = xcalloc (grown.capacity, sizeof *grown.keys);
      grown.values = xcalloc (grown.capacity, sizeof *grown.values);
      for (size_t i = 0; i < map->capacity; i++)
        if (map->keys[i] != 0)
          {
            size_t slot = map_find (&grown, map->keys[i]);
            grown.keys[slot] = map->keys[i];
            grown.values[slot] = map->values[i];
            grown.count++;
          }
      free (map->keys);
      free (map->values);
      *map = grown;
    }
  size_t slot = map_find (map, key);
  if (map->keys[slot] == 0)
    {
      map->keys[slot] = key;
      map->count++;
    }
  map->values[slot] = value;
}

struct slot_list
{
  uint64_t *items;
  size_t count, capacity;
};

struct trace_model
{
  struct u64_map addresses; /* address -> slot + 1, or MAP_FREED */
  struct u64_map moving;    /* a realloc's sequence -> slot + 1 */
  uint64_t *slot_sizes;     /* bytes of each live slot */
  uint64_t slot_count, slot_capacity;
  struct slot_list *free_slots; /* per thread */
  size_t thread_count;
  uint64_t live, peak, peak_sequence;
  struct trace_problems problems;
};

struct trace_model *
trace_model_new (size_t thread_count)
{
  struct trace_model *model = xcalloc (1, sizeof *model);
  model->thread_count = thread_count;
  model->free_slots
      = xcalloc (thread_count ? thread_count : 1, sizeof *model->free_slots);
  return model;
}

void
trace_model_free (struct trace_model *model)
{
  if (model == NULL)
    return;
  free (model->addresses.keys);
  free (model->addresses.values);
  free (model->moving.keys);
  free (model->moving.values);
  free (model->slot_sizes);
  for (size_t i = 0; i < model->thread_count; i++)
    free (model->free_slots[i].items);
  free (model->free_slots);
  free (model);
}

const struct trace_problems *
trace_model_problems (const struct trace_model *model)
{
  return &model->problems;
}

uint64_t
trace_model_slot_count (const struct trace_model *model)
{
  return model->slot_count;
}

uint64_t
trace_model_peak (const struct trace_model *model, uint64_t *at_sequence)
{
  if (at_sequence != NULL)
    *at_sequence = model->peak_sequence;
  return model->peak;
}

uint64_t
trace_model_live (const struct trace_model *model)
{
  return model->live;
}

/* A slot for THREAD: one it freed before, or a new one.  */
static uint64_t
take_slot (struct trace_model *model, uint32_t thread)
{
  struct slot_list *list = &model->free_slots[thread];
  if (list->count > 0)
    return list->items[--list->count];
  if (model->slot_count == model->slot_capacity)
    {
      model->slot_capacity
          = model->slot_capacity ? model->slot_capacity * 2 : 1024;
      model->slot_sizes = xrealloc (model->slot_sizes,
                                    model->slot_capacity * sizeof (uint64_t));
    }
  model->slot_sizes[model->slot_count] = 0;
  return model->slot_count++;
}

static void
give_slot (struct trace_model *model, uint32_t thread, uint64_t slot)
{
  struct slot_list *list = &model->free_slots[thread];
  if (list->count == list->capacity)
    {
      list->capacity = list->capacity ? list->capacity * 2 : 64;
      list->items = xrealloc (list->items, list->capacity * sizeof (uint64_t));
    }
  list->items[list->count++] = slot;
}

/* RESULT, returned by an allocation of THREAD, is bound to SLOT; a block
   the model still held at that address is dropped first.  */
static void
bind (struct trace_model *model, uint32_t thread, uint64_t result,
      uint64_t slot, struct trace_step *step)
{
  uint64_t held = map_get (&model->addresses, result);
  if (held != MAP_NONE && held != MAP_FREED)
    {
      model->problems.reused_live++;
      step->dropped = true;
      step->dropped_slot = held - 1;
      step->dropped_size = model->slot_sizes[held - 1];
      model->live -= step->dropped_size;
      model->slot_sizes[held - 1] = 0;
      give_slot (model, thread, held - 1);
    }
  map_put (&model->addresses, result, slot + 1);
}

static void
realloc_begins (struct trace_model *model, const struct trace_call *call)
{
  const struct memprof_trace_record *record = &call->record;
  uint64_t held;
  if (record->pointer == 0)
    return;
  held = map_get (&model->addresses, record->pointer);
  if (held == MAP_NONE || held == MAP_FREED)
    {
      model->problems.unknown_reallocs++;
      return;
    }
  map_put (&model->addresses, record->pointer, MAP_FREED);
  map_put (&model->moving, record->sequence, held);
}

static void
call_ends (struct trace_model *model, const struct trace_call *call,
           struct trace_step *step)
{
  const struct memprof_trace_record *record = &call->record;
  unsigned op = record->op;

  memset (step, 0, sizeof *step);
  if (!memprof_trace_op_returns_pointer (op))
    {
      uint64_t held;
      if (record->pointer == 0)
        {
          model->problems.null_frees++;
          return;
        }
      held = map_get (&model->addresses, record->pointer);
      if (held == MAP_NONE)
        model->problems.unknown_frees++;
      else if (held == MAP_FREED)
        model->problems.double_frees++;
      else
        {
          step->kind = TRACE_STEP_FREE;
          step->slot = held - 1;
          step->old_size = model->slot_sizes[held - 1];
          model->live -= step->old_size;
          model->slot_sizes[held - 1] = 0;
          map_put (&model->addresses, record->pointer, MAP_FREED);
          give_slot (model, call->thread, held - 1);
        }
      return;
    }
  if (memprof_trace_op_is_realloc (op))
    {
      uint64_t moving = map_get (&model->moving, record->sequence);
      if (moving != MAP_NONE)
        {
          uint64_t slot = moving - 1;
          map_put (&model->moving, record->sequence, MAP_NONE);
          if (record->result == 0 && record->size != 0)
            {
              /* Failed: the old block stays where it was.  */
              model->problems.failed_calls++;
              map_put (&model->addresses, record->pointer, moving);
              return;
            }
          step->kind = TRACE_STEP_REALLOC;
          step->slot = slot;
          step->old_size = model->slot_sizes[slot];
          model->live -= step->old_size;
          /* realloc (p, 0) frees p (glibc returns NULL; a block another
             allocator returns is not followed).  */
          if (record->result == 0 || record->size == 0)
            {
              step->freed = true;
              model->slot_sizes[slot] = 0;
              give_slot (model, call->thread, slot);
              return;
            }
          step->new_size = record->size;
          bind (model, call->thread, record->result, slot, step);
          model->slot_sizes[slot] = record->size;
          model->live += record->size;
          return;
        }
      /* realloc (NULL, n), or of a pointer the model does not know.  */
      if (record->result == 0)
        {
          if (record->size != 0)
            model->problems.failed_calls++;
          return;
        }
      step->kind = TRACE_STEP_REALLOC;
      step->from_empty = true;
      step->slot = take_slot (model, call->thread);
      step->new_size = record->size;
      bind (model, call->thread, record->result, step->slot, step);
      model->slot_sizes[step->slot] = record->size;
      model->live += record->size;
      return;
    }
  if (record->result == 0)
    {
      model->problems.failed_calls++;
      return;
    }
  step->kind = TRACE_STEP_ALLOC;
  step->new_size = trace_requested_bytes (record);
  step->slot = take_slot (model, call->thread);
  bind (model, call->thread, record->result, step->slot, step);
  model->slot_sizes[step->slot] = step->new_size;
  model->live += step->new_size;
}

struct realloc_start
{
  uint64_t sequence; /* before the call */
  size_t call;
};

static int
compare_starts (const void *a, const void *b)
{
  uint64_t x = ((const struct realloc_start *) a)->sequence;
  uint64_t y = ((const struct realloc_start *) b)->sequence;
  return x < y ? -1 : x > y;
}

void
trace_model_run (struct trace_model *model, const struct trace_file *trace,
                 trace_step_fn step_fn, void *cookie)
{
  struct realloc_start *starts = NULL;
  size_t start_count = 0, start_capacity = 0, next_start = 0;

  for (size_t i = 0; i < trace->call_count; i++)
    if (memprof_trace_op_is_realloc (trace->calls[i].record.op))
      {
        if (start_count == start_capacity)
          {
            start_capacity = start_capacity ? 2 * start_capacity : 256;
            starts = xrealloc (starts, start_capacity * sizeof *starts);
          }
        starts[start_count].sequence = trace->calls[i].record.extra;
        starts[start_count++].call = i;
      }
  if (start_count > 0)
    qsort (starts, start_count, sizeof *starts, compare_starts);
  for (size_t i = 0; i < trace->call_count; i++)
    {
      const struct trace_call *call = &trace->calls[i];
      struct trace_step step;
      while (next_start < start_count
             && starts[next_start].sequence < call->record.sequence)
        realloc_begins (model, &trace->calls[starts[next_start++].call]);
      call_ends (model, call, &step);
      if (model->live > model->peak)
        {
          model->peak = model->live;
          model->peak_sequence = call->record.sequence;
        }
      if (step_fn != NULL)
        step_fn (cookie, call, &step, model->live);
    }
  free (starts);
}
