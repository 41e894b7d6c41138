/* Workload files (docs/trace-format.md, "The workload file"): what
   `memprof trace2wl' makes of a trace and `memprof replay' runs.  Per
   thread, a list of operations on pointer slots instead of addresses,
   with waits that order a thread after another where the trace did (a
   free of a block another thread allocated).  Uncompressed, so that the
   replay maps it and decodes each operation as it runs it.  */

#ifndef MEMPROF_ANALYSIS_WORKLOAD_H
#define MEMPROF_ANALYSIS_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace.h"

/* "\x89MPWLD1\n" on disk.  */
#define WORKLOAD_MAGIC 0x0a31444c57504d89ULL
#define WORKLOAD_VERSION 1
/* The most threads a workload may have (each is a thread of the replay),
   and the most operations of one thread.  */
#define WORKLOAD_THREADS_MAX 4096
#define WORKLOAD_THREAD_OPS_MAX 0xffffffffULL

struct workload_header
{
  uint64_t magic;
  uint32_t version;
  uint32_t header_size; /* 64 */
  uint32_t thread_count;
  uint32_t flags; /* 0 */
  uint64_t slot_count;
  uint64_t op_count;    /* of all threads, waits not counted */
  uint64_t peak_live;   /* the most live requested bytes, trace order */
  uint64_t final_live;  /* live requested bytes after the last call */
  uint64_t duration_ns; /* of the trace */
} __attribute__ ((packed));

struct workload_thread
{
  uint32_t tid;      /* the traced thread's id */
  uint32_t reserved; /* 0 */
  uint64_t offset;   /* of its operations, from the start of the file */
  uint64_t size;     /* bytes of its operations */
  uint64_t op_count; /* operations, waits not counted */
} __attribute__ ((packed));

/* Operation codes: the trace's (traceformat.h) for calls, except that
   reallocarray is written as realloc; and a wait.  */
#define WORKLOAD_WAIT 0

struct workload_op
{
  uint8_t code;      /* WORKLOAD_WAIT or enum memprof_trace_op */
  uint8_t flags;     /* new, delete: MEMPROF_TRACE_NOTHROW | ... */
  uint64_t sequence; /* the call's in the trace */
  uint64_t slot;
  uint64_t size;        /* calloc: of an element */
  uint64_t count;       /* calloc: elements */
  uint64_t alignment;   /* memalign family, aligned new and delete */
  uint32_t wait_thread; /* WAIT: until this thread ... */
  uint64_t wait_ops;    /* ... has done this many operations */
};

/* ---- Writing ---- */

struct buffer;
/* Append OP (its sequence is written relative to *PREVIOUS_SEQUENCE,
   which is updated) to STREAM.  */
void workload_encode_op (struct buffer *stream, const struct workload_op *op,
                         uint64_t *previous_sequence);

struct trace_file;
/* What a conversion made.  */
struct workload_conversion
{
  struct trace_problems problems; /* repaired or not replayed */
  uint64_t op_count, slot_count, waits, peak_live;
};
/* Append to FILE the workload of TRACE (wlconvert.c).  -1 with a message
   (too many threads or calls for a workload).  */
int workload_from_trace (const struct trace_file *trace, struct buffer *file,
                         struct workload_conversion *result, char *error,
                         size_t error_size);

/* ---- Reading ---- */

struct workload
{
  const uint8_t *data;
  size_t size;
  const char *name;
  struct workload_header header;
  struct workload_thread *threads;
};

/* Check the header and the thread table of the workload in DATA.  -1
   with a message naming NAME, the byte offset and what was expected.  */
int workload_open_buffer (const uint8_t *data, size_t size, const char *name,
                          struct workload *workload, char *error,
                          size_t error_size);
void workload_close (struct workload *workload);

struct workload_cursor
{
  const uint8_t *start, *p, *end;
  uint64_t sequence;
  uint64_t file_offset; /* of START */
};

void workload_cursor_init (const struct workload *workload, uint32_t thread,
                           struct workload_cursor *cursor);
/* The next operation: 1, 0 at the end, -1 with a message when the bytes
   are not an operation.  */
int workload_next (const struct workload *workload,
                   struct workload_cursor *cursor, struct workload_op *op,
                   char *error, size_t error_size);

/* The bytes an allocation operation asks for.  */
uint64_t workload_op_bytes (const struct workload_op *op);

/* Walk every thread's operations in the trace's order (by sequence),
   keeping each slot's size.  STRICT: the check the replay makes before
   running anything: every operation decodes, slots and threads are in
   range, every wait is for an operation that comes earlier in that order
   (so no replay can deadlock), a slot used by two threads is used by the
   second only after a wait that orders it after the first (so no two
   replay threads touch one slot at once), an allocation is never into a
   live slot and a free never of an empty one.  Without STRICT, FAILED
   names the operations the replay could not do (they change nothing).
   CURVE, when not NULL, gets the live requested bytes after each
   sequence number at which they changed.  *PEAK gets the most.  Returns
   0 or -1 with a message.  */
typedef bool (*workload_failed_fn) (void *cookie, uint32_t thread,
                                    uint64_t op_index);
typedef void (*workload_curve_fn) (void *cookie, uint64_t sequence,
                                   uint64_t live);
int workload_walk (const struct workload *workload, bool strict,
                   workload_failed_fn failed, workload_curve_fn curve,
                   void *cookie, uint64_t *peak, char *error,
                   size_t error_size);

#endif /* MEMPROF_ANALYSIS_WORKLOAD_H */
