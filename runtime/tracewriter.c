/* The trace's writer: one thread of the runtime's own that compresses the
   chunks the program's threads hand over, with zstd's streaming API, into
   the trace file (docs/trace-format.md).

   zstd gets its memory from mmap (a custom allocator), so nothing here
   calls malloc; the thread runs with in_runtime set and all signals
   blocked.  The file is written under a temporary name next to its
   final one and renamed when the trace stops (at exit, or by
   memprof_trace_stop).  A sync (memprof_trace_sync, memprof_dump) writes
   every record taken so far, ends a zstd block there, and gives the file
   its final name too (a second link to the same file), so that it can be
   read while the program runs; the rename at the end then only removes
   the temporary name.  A trace_file naming a FIFO or a device is written
   in place instead (open_output): no temporary file, no second name, no
   rename, so /dev/null or a FIFO's reader is never replaced by a regular
   file; such a trace cannot be started anew (memprof_trace_reset).  */

#define _GNU_SOURCE
#include "tracewriter.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
/* ZSTD_customMem and ZSTD_createCCtx_advanced: stable since zstd 1.4,
   still in the "static linking only" part of the header.  */
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

/* zstd's fastest levels keep up with a thread that allocates without
   pause; the records are regular enough that they still shrink ~10x.  */
#define TRACE_ZSTD_LEVEL 1
#define PATH_BYTES 4096
/* When idle, the writer wakes this often to write a clock reading and
   take the records of threads that have exited.  */
#define IDLE_WAKE_MS 100

static int trace_fd = -1;
/* temp_path is empty when the trace is written in place.  */
static char final_path[PATH_BYTES], temp_path[PATH_BYTES];
static bool final_linked; /* a sync gave the file its final name */
static ZSTD_CCtx *compressor;
static uint8_t *out_buffer;
static size_t out_capacity;
static bool write_failed;
static uint64_t records_written;
static uint32_t exited_threads_written; /* reaped threads with records */
static pthread_t writer_thread;
static unsigned trace_count; /* %n: traces started by this process */

/* ---- zstd's memory, from mmap ---- */

#define ZSTD_MAP_HEADER 64

static void *
zstd_map (void *opaque, size_t size)
{
  size_t total = size + ZSTD_MAP_HEADER;
  uint8_t *base;
  (void) opaque;
  if (total < size)
    return NULL;
  base = mmap (NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
               -1, 0);
  if (base == MAP_FAILED)
    return NULL;
  memcpy (base, &total, sizeof total);
  return base + ZSTD_MAP_HEADER;
}

static void
zstd_unmap (void *opaque, void *address)
{
  uint8_t *base;
  size_t total;
  (void) opaque;
  if (address == NULL)
    return;
  base = (uint8_t *) address - ZSTD_MAP_HEADER;
  memcpy (&total, base, sizeof total);
  munmap (base, total);
}

static const ZSTD_customMem zstd_memory = { zstd_map, zstd_unmap, NULL };

/* ---- Output ---- */

/* The name of the file being written, for the log.  */
static const char *
written_path (void)
{
  return temp_path[0] != '\0' ? temp_path : final_path;
}

static void
write_out (const uint8_t *data, size_t size)
{
  while (size > 0 && !write_failed)
    {
      ssize_t written = write (trace_fd, data, size);
      if (written < 0 && errno == EINTR)
        continue;
      if (written <= 0)
        {
          log_printf ("trace: cannot write '%s': %s; the trace will not be "
                      "kept",
                      written_path (),
                      written < 0 ? strerror (errno) : "no space");
          write_failed = true;
          return;
        }
      data += written;
      size -= (size_t) written;
    }
}

static void
compress (const void *data, size_t size, ZSTD_EndDirective mode)
{
  ZSTD_inBuffer in = { data, size, 0 };

  if (write_failed)
    return;
  for (;;)
    {
      ZSTD_outBuffer out = { out_buffer, out_capacity, 0 };
      size_t left = ZSTD_compressStream2 (compressor, &out, &in, mode);
      if (ZSTD_isError (left))
        {
          log_printf ("trace: zstd: %s", ZSTD_getErrorName (left));
          write_failed = true;
          return;
        }
      write_out (out_buffer, out.pos);
      if (mode == ZSTD_e_continue ? in.pos == in.size : left == 0)
        return;
    }
}

/* ---- The records' encoding (traceformat.h) ---- */

static inline uint8_t *
put_varint (uint8_t *out, uint64_t value)
{
  while (value >= 0x80)
    {
      *out++ = (uint8_t) (value | 0x80);
      value >>= 7;
    }
  *out++ = (uint8_t) value;
  return out;
}

static inline uint8_t *
put_zigzag (uint8_t *out, uint64_t value, uint64_t previous)
{
  int64_t delta = (int64_t) (value - previous);
  return put_varint (out, ((uint64_t) delta << 1) ^ (uint64_t) (delta >> 63));
}

/* Encode COUNT records into OUT, column by column (traceformat.h);
   returns the end.  A column of like values compresses two to three
   times faster than whole records do.  */
static uint8_t *
encode_records (uint8_t *out, const struct memprof_trace_record *records,
                uint32_t count)
{
  uint64_t previous;
  uint32_t i;

  for (i = 0; i < count; i++)
    *out++ = (uint8_t) (records[i].op | records[i].flags << 4);
  for (i = 0, previous = 0; i < count; previous = records[i++].sequence)
    out = put_zigzag (out, records[i].sequence, previous);
  for (i = 0, previous = 0; i < count; previous = records[i++].timestamp)
    out = put_zigzag (out, records[i].timestamp, previous);
  /* The previous address runs through pointers and results alike.  */
  for (i = 0, previous = 0; i < count; i++)
    {
      const struct memprof_trace_record *record = &records[i];
      if (memprof_trace_op_takes_pointer (record->op))
        {
          out = put_zigzag (out, record->pointer, previous);
          if (record->pointer != 0)
            previous = record->pointer;
        }
      if (memprof_trace_op_returns_pointer (record->op) && record->result != 0)
        previous = record->result;
    }
  for (i = 0, previous = 0; i < count; i++)
    {
      const struct memprof_trace_record *record = &records[i];
      if (memprof_trace_op_takes_pointer (record->op) && record->pointer != 0)
        previous = record->pointer;
      if (memprof_trace_op_returns_pointer (record->op))
        {
          out = put_zigzag (out, record->result, previous);
          if (record->result != 0)
            previous = record->result;
        }
    }
  for (i = 0; i < count; i++)
    out = put_varint (out, records[i].size);
  for (i = 0; i < count; i++)
    out = put_varint (out, memprof_trace_op_is_realloc (records[i].op)
                               ? records[i].sequence - records[i].extra
                               : records[i].extra);
  for (i = 0; i < count; i++)
    out = put_zigzag (out, records[i].usable, records[i].size);
  if (trace_with_stacks)
    for (i = 0; i < count; i++)
      out = put_varint (out, records[i].stack_id);
  return out;
}

/* Room for the encoding of one chunk's records.  */
static uint8_t *encode_buffer;
#define ENCODE_BUFFER_SIZE (TRACE_CHUNK_RECORDS * MEMPROF_TRACE_ENCODED_MAX)

/* The names last written, by thread id (direct-mapped: a collision only
   writes a name again).  */
#define NAMES_KEPT 1024
static struct
{
  uint32_t tid;
  char name[MEMPROF_TRACE_THREAD_NAME_SIZE];
} names_written[NAMES_KEPT];

/* Thread TID's name now: the kernel's (/proc/self/task/TID/comm, read
   without stdio) while it lives, else the one it had when it began its
   last chunk.  */
static bool
current_thread_name (uint32_t tid, char *name)
{
  char path[64];
  memset (name, 0, MEMPROF_TRACE_THREAD_NAME_SIZE);
  snprintf (path, sizeof path, "/proc/self/task/%u/comm", tid);
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd >= 0)
    {
      ssize_t got = read (fd, name, MEMPROF_TRACE_THREAD_NAME_SIZE - 1);
      close (fd);
      if (got > 0)
        {
          name[got] = '\0';
          char *newline = strchr (name, '\n');
          if (newline != NULL)
            memset (newline, 0, (size_t) (name + got - newline));
          return name[0] != '\0';
        }
    }
  return trace_thread_last_name (tid, name);
}

/* A THREAD block before TID's records when its name is new.  */
static void
emit_thread_name (uint32_t tid)
{
  char name[MEMPROF_TRACE_THREAD_NAME_SIZE];
  unsigned slot = (tid * 2654435761u) % NAMES_KEPT;
  if (!current_thread_name (tid, name)
      || (names_written[slot].tid == tid
          && memcmp (names_written[slot].name, name, sizeof name) == 0))
    return;
  names_written[slot].tid = tid;
  memcpy (names_written[slot].name, name, sizeof name);
  struct memprof_trace_block block
      = { MEMPROF_TRACE_BLOCK_THREAD, tid, 0, MEMPROF_TRACE_THREAD_NAME_SIZE };
  compress (&block, sizeof block, ZSTD_e_continue);
  compress (name, sizeof name, ZSTD_e_continue);
}

static void
emit_records (uint32_t tid, const struct memprof_trace_record *records,
              uint32_t count)
{
  emit_thread_name (tid);
  uint8_t *end = encode_records (encode_buffer, records, count);
  struct memprof_trace_block block = { MEMPROF_TRACE_BLOCK_RECORDS, tid, count,
                                       (uint32_t) (end - encode_buffer) };
  compress (&block, sizeof block, ZSTD_e_continue);
  compress (encode_buffer, block.size, ZSTD_e_continue);
  records_written += count;
}

static void
read_clock (struct memprof_trace_clock *clock)
{
  struct timespec now;
  clock_gettime (CLOCK_MONOTONIC, &now);
  clock->tsc = __builtin_ia32_rdtsc ();
  clock->monotonic = (uint64_t) now.tv_sec * 1000000000u + now.tv_nsec;
}

static void
emit_clock (uint32_t kind)
{
  struct memprof_trace_block block = { kind, 0, 0, 0 };
  struct memprof_trace_clock clock;
  read_clock (&clock);
  compress (&block, sizeof block, ZSTD_e_continue);
  compress (&clock, sizeof clock, ZSTD_e_continue);
}

static void
emit_header (void)
{
  struct memprof_trace_header header = {
    .magic = MEMPROF_TRACE_MAGIC,
    .version = MEMPROF_TRACE_VERSION,
    .header_size = sizeof header,
    .record_size = sizeof (struct memprof_trace_record),
    .pid = (uint32_t) getpid (),
    .flags = trace_with_stacks ? MEMPROF_TRACE_FLAG_STACKS : 0,
    .start_tsc = trace_shared.start_tsc,
    .start_monotonic = trace_shared.start_monotonic,
    .start_realtime = trace_shared.start_realtime,
  };
  compress (&header, sizeof header, ZSTD_e_continue);
  /* A new file: every thread's name goes in again.  */
  memset (names_written, 0, sizeof names_written);
}

/* Write the chunks of LIST and give them back.  */
static void
write_chunks (struct trace_chunk *list)
{
  while (list != NULL)
    {
      struct trace_chunk *next = list->next;
      emit_records (list->thread, &list->records[list->first], list->count);
      trace_chunk_written (list);
      list = next;
    }
}

static struct trace_chunk *
take_queue (void)
{
  struct trace_chunk *list;
  pthread_mutex_lock (&trace_shared.mutex);
  list = trace_shared.queue_head;
  trace_shared.queue_head = trace_shared.queue_tail = NULL;
  pthread_mutex_unlock (&trace_shared.mutex);
  return list;
}

/* Every record taken so far goes out: the queue, the threads' chunks,
   and what was queued meanwhile.  Returns the threads with records.  */
static uint32_t
write_everything (void)
{
  uint32_t threads;
  write_chunks (take_queue ());
  threads = trace_collect_threads (false, false, emit_records);
  write_chunks (take_queue ());
  return threads;
}

static void
discard_everything (void)
{
  struct trace_chunk *list = take_queue ();
  while (list != NULL)
    {
      struct trace_chunk *next = list->next;
      trace_chunk_written (list);
      list = next;
    }
  trace_collect_threads (true, false, emit_records);
}

/* ---- Requests ---- */

static int
answer_sync (void)
{
  write_everything ();
  emit_clock (MEMPROF_TRACE_BLOCK_SYNC);
  compress (NULL, 0, ZSTD_e_flush);
  if (!write_failed && !final_linked && temp_path[0] != '\0')
    {
      /* A second name, made atomically: link a fresh name, rename it.  */
      char link_path[PATH_BYTES + 8];
      snprintf (link_path, sizeof link_path, "%s.link", temp_path);
      unlink (link_path);
      if (link (temp_path, link_path) == 0
          && rename (link_path, final_path) == 0)
        final_linked = true;
      else
        {
          log_printf ("trace: cannot name '%s': %s", final_path,
                      strerror (errno));
          unlink (link_path);
        }
    }
  return write_failed ? -1 : 0;
}

static int
answer_reset (void)
{
  if (temp_path[0] == '\0')
    {
      /* What a FIFO's reader or a device took cannot be taken back: the
         trace goes on unchanged.  */
      log_printf ("trace: '%s' is written in place (a FIFO or a device) "
                  "and cannot be started anew; the trace goes on",
                  final_path);
      return -1;
    }
  discard_everything ();
  exited_threads_written = 0;
  records_written = 0;
  if (write_failed)
    return -1;
  if (ftruncate (trace_fd, 0) != 0 || lseek (trace_fd, 0, SEEK_SET) != 0)
    {
      log_printf ("trace: cannot truncate '%s': %s", temp_path,
                  strerror (errno));
      write_failed = true;
      return -1;
    }
  ZSTD_CCtx_reset (compressor, ZSTD_reset_session_only);
  emit_header ();
  return write_failed ? -1 : 0;
}

static int
answer_stop (void)
{
  uint32_t threads = write_everything ();
  struct memprof_trace_block block = { MEMPROF_TRACE_BLOCK_END, 0, 0, 0 };
  struct memprof_trace_clock clock;
  struct memprof_trace_end end;
  int error;

  read_clock (&clock);
  end.tsc = clock.tsc;
  end.monotonic = clock.monotonic;
  end.record_count = records_written;
  end.thread_count = threads + exited_threads_written;
  compress (&block, sizeof block, ZSTD_e_continue);
  compress (&end, sizeof end, ZSTD_e_continue);
  compress (NULL, 0, ZSTD_e_end);
  if (close (trace_fd) != 0 && !write_failed)
    {
      log_printf ("trace: cannot write '%s': %s", written_path (),
                  strerror (errno));
      write_failed = true;
    }
  trace_fd = -1;
  if (write_failed)
    {
      discard_output (temp_path);
      if (final_linked)
        unlink (final_path);
      return -1;
    }
  if (final_linked)
    error = unlink (temp_path) == 0 ? 0 : errno;
  else
    error = put_in_place (temp_path, final_path);
  if (error != 0)
    {
      log_printf ("trace: cannot rename '%s' to '%s': %s", temp_path,
                  final_path, strerror (error));
      unlink (temp_path);
      return -1;
    }
  if (runtime_options.verbosity >= 1)
    log_printf ("trace written to '%s': %llu calls of %u threads", final_path,
                (unsigned long long) records_written,
                (unsigned) end.thread_count);
  return 0;
}

static void *
writer_main (void *unused)
{
  struct timespec last_idle;
  (void) unused;

  in_runtime++;
  clock_gettime (CLOCK_MONOTONIC, &last_idle);
  for (;;)
    {
      struct trace_chunk *list;
      unsigned kinds;
      uint64_t target;
      struct timespec now;
      int status = 0;

      pthread_mutex_lock (&trace_shared.mutex);
      if (trace_shared.queue_head == NULL && trace_shared.pending == 0)
        {
          struct timespec until;
          clock_gettime (CLOCK_REALTIME, &until);
          until.tv_nsec += IDLE_WAKE_MS * 1000000L;
          if (until.tv_nsec >= 1000000000L)
            {
              until.tv_sec++;
              until.tv_nsec -= 1000000000L;
            }
          trace_shared.writer_idle = true;
          pthread_cond_timedwait (&trace_shared.work, &trace_shared.mutex,
                                  &until);
          trace_shared.writer_idle = false;
        }
      list = trace_shared.queue_head;
      trace_shared.queue_head = trace_shared.queue_tail = NULL;
      kinds = trace_shared.pending;
      trace_shared.pending = 0;
      target = trace_shared.request_serial;
      pthread_mutex_unlock (&trace_shared.mutex);

      write_chunks (list);
      clock_gettime (CLOCK_MONOTONIC, &now);
      if ((now.tv_sec - last_idle.tv_sec) * 1000
              + (now.tv_nsec - last_idle.tv_nsec) / 1000000
          >= IDLE_WAKE_MS)
        {
          last_idle = now;
          exited_threads_written
              += trace_collect_threads (false, true, emit_records);
          emit_clock (MEMPROF_TRACE_BLOCK_CLOCK);
        }
      if (kinds == 0)
        continue;
      if (kinds & TRACE_REQUEST_SYNC)
        status |= answer_sync ();
      if (kinds & TRACE_REQUEST_RESET)
        status |= answer_reset ();
      if (kinds & TRACE_REQUEST_STOP)
        status |= answer_stop ();
      pthread_mutex_lock (&trace_shared.mutex);
      trace_shared.done_serial = target;
      trace_shared.done_status = status;
      if (kinds & TRACE_REQUEST_STOP)
        {
          trace_shared.writer_running = false;
          pthread_cond_broadcast (&trace_shared.space);
        }
      pthread_cond_broadcast (&trace_shared.done);
      pthread_mutex_unlock (&trace_shared.mutex);
      if (kinds & TRACE_REQUEST_STOP)
        break;
    }
  in_runtime--;
  return NULL;
}

int
trace_writer_request (unsigned kind)
{
  uint64_t serial;
  int status;

  in_runtime++;
  pthread_mutex_lock (&trace_shared.mutex);
  serial = ++trace_shared.request_serial;
  trace_shared.pending |= kind;
  /* A request always wakes the writer.  */
  pthread_cond_signal (&trace_shared.work);
  while (trace_shared.done_serial < serial)
    pthread_cond_wait (&trace_shared.done, &trace_shared.mutex);
  status = trace_shared.done_status;
  pthread_mutex_unlock (&trace_shared.mutex);
  if (kind & TRACE_REQUEST_STOP)
    pthread_join (writer_thread, NULL);
  in_runtime--;
  return status;
}

/* ---- Opening ---- */

int
trace_writer_open (void)
{
  pthread_attr_t attributes;
  sigset_t all, old;
  int status = -1;

  in_runtime++;
  if (!expand_output_name (runtime_options.trace_file, trace_count, final_path,
                           sizeof final_path))
    {
      log_printf ("trace: trace_file '%s' is too long",
                  runtime_options.trace_file);
      goto done;
    }
  if (compressor == NULL)
    compressor = ZSTD_createCCtx_advanced (zstd_memory);
  if (out_buffer == NULL)
    {
      out_capacity = ZSTD_CStreamOutSize ();
      out_buffer = runtime_map (out_capacity);
    }
  if (encode_buffer == NULL)
    encode_buffer = runtime_map (ENCODE_BUFFER_SIZE);
  if (compressor == NULL || out_buffer == NULL || encode_buffer == NULL)
    {
      log_printf ("trace: out of memory for the compressor");
      goto done;
    }
  ZSTD_CCtx_reset (compressor, ZSTD_reset_session_and_parameters);
  ZSTD_CCtx_setParameter (compressor, ZSTD_c_compressionLevel,
                          TRACE_ZSTD_LEVEL);
  ZSTD_CCtx_setParameter (compressor, ZSTD_c_checksumFlag, 1);
  trace_fd = open_output (final_path, temp_path, sizeof temp_path);
  if (trace_fd < 0)
    {
      log_printf ("trace: cannot %s '%s': %s; nothing will be traced",
                  written_in_place (final_path) ? "open"
                                                : "create a file next to",
                  final_path, strerror (errno));
      goto done;
    }
  write_failed = false;
  final_linked = false;
  records_written = 0;
  exited_threads_written = 0;
  emit_header ();

  pthread_mutex_lock (&trace_shared.mutex);
  trace_shared.writer_running = true;
  trace_shared.pending = 0;
  trace_shared.done_serial = trace_shared.request_serial;
  pthread_mutex_unlock (&trace_shared.mutex);
  pthread_attr_init (&attributes);
  /* Keep the program's signals to its own threads.  */
  sigfillset (&all);
  pthread_sigmask (SIG_SETMASK, &all, &old);
  if (pthread_create (&writer_thread, &attributes, writer_main, NULL) == 0)
    status = 0;
  pthread_sigmask (SIG_SETMASK, &old, NULL);
  pthread_attr_destroy (&attributes);
  if (status != 0)
    {
      log_printf ("trace: cannot start the writer thread; nothing will be "
                  "traced");
      pthread_mutex_lock (&trace_shared.mutex);
      trace_shared.writer_running = false;
      pthread_mutex_unlock (&trace_shared.mutex);
      close (trace_fd);
      trace_fd = -1;
      discard_output (temp_path);
      goto done;
    }
  if (runtime_options.verbosity >= 2)
    log_printf ("trace: recording into '%s'", final_path);
  trace_count++;
done:
  in_runtime--;
  return status;
}

void
trace_writer_forget (void)
{
  /* The parent's file: closed, never written, renamed or removed here. */
  if (trace_fd >= 0)
    close (trace_fd);
  trace_fd = -1;
  /* The parent's compressor may have been in the middle of a frame.  */
  compressor = NULL;
  final_linked = false;
  write_failed = false;
  pthread_cond_init (&trace_shared.work, NULL);
  pthread_cond_init (&trace_shared.space, NULL);
  pthread_cond_init (&trace_shared.done, NULL);
  trace_shared.pending = 0;
  trace_shared.done_serial = trace_shared.request_serial;
}
