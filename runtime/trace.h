/* The malloc API trace (trace=1): what the interposed entry points call.
   The fast path is here, inline: one flag test when tracing is off; when
   it is on, a global sequence number (one atomic add), the time stamp
   counter, and a 64-byte record written into this thread's buffer.
   Everything else (buffers, the writer thread, the file) is in trace.c
   and tracewriter.c; docs/trace.md says what is recorded and when.  */

#ifndef MEMPROF_TRACE_H
#define MEMPROF_TRACE_H

#include "internal.h"
#include "traceformat.h"

/* A buffer of records: what a thread fills and the writer compresses.
   TRACE_CHUNK_SIZE bytes, mmap'd, never freed (kept on a free list).  */
#define TRACE_CHUNK_SIZE (32 * 1024)
#define TRACE_CHUNK_RECORDS                                                    \
  ((TRACE_CHUNK_SIZE - 64) / sizeof (struct memprof_trace_record))

struct trace_chunk
{
  struct trace_chunk *next; /* on the writer's queue or the free list */
  uint32_t thread;          /* the thread's id (gettid) */
  uint32_t first, count;    /* the records to write: [first, first+count) */
  char padding[64 - sizeof (void *) - 3 * sizeof (uint32_t)];
  struct memprof_trace_record records[TRACE_CHUNK_RECORDS];
};

/* One per thread that has recorded something, in a registry of mmap'd
   memory.  The owner appends to CHUNK without a lock and publishes each
   record by a release store of COMMITTED; the writer reads records below
   COMMITTED.  CHUNK changes, and TAKEN moves, only under LOCK.  */
struct trace_thread
{
  struct trace_chunk *chunk;  /* NULL: none yet */
  _Atomic uint32_t committed; /* records written into CHUNK */
  uint32_t taken;             /* of them, already given to the writer */
  uint32_t tid;
  bool in_use;     /* a live thread owns it */
  bool wrote_any;  /* it has records in the current file */
  spinlock_t lock; /* CHUNK, TAKEN */
  struct trace_thread *next_free;
  char name[16]; /* its name (prctl PR_GET_NAME) when its chunk began */
  char padding[64 - 2 * sizeof (void *) - 3 * sizeof (uint32_t) - 3 - 16];
} __attribute__ ((aligned (64)));

/* Records are taken (a trace is started and not paused).  */
extern _Atomic int trace_recording;
/* The flag byte's (allocator_observers_changed) view of the trace: set
   before trace_recording is, cleared after, so that a thread that sees
   the trace recording (malloc asks trace_recording) also sees the byte
   say somebody watches (a slot's free asks only the byte).  */
extern _Atomic int trace_watched;
/* Stack ids go into the records (trace_stacks=1 when the trace started). */
extern bool trace_with_stacks;
/* The next sequence number; the first is 1.  */
extern _Atomic uint64_t trace_sequence;
extern __thread struct trace_thread *trace_self
    __attribute__ ((tls_model ("initial-exec")));

/* This thread's state with room for one record, or NULL when the record
   cannot be taken (the trace stopped meanwhile).  */
struct trace_thread *trace_thread_for_append (void);

/* Is a call made now to be recorded?  Calls the runtime makes itself
   (in_runtime) never are.  */
static inline bool
trace_is_recording (void)
{
  return UNLIKELY (
             atomic_load_explicit (&trace_recording, memory_order_relaxed))
         && in_runtime == 0;
}

/* A sequence number, for the moment before a realloc.  Relaxed is
   enough: the counter's modification order follows happens-before, so a
   free that happened before a malloc has the smaller number.  */
static inline uint64_t
trace_next_sequence (void)
{
  return atomic_fetch_add_explicit (&trace_sequence, 1, memory_order_relaxed);
}

static inline void
trace_append (unsigned op, unsigned flags, uint64_t pointer, uint64_t result,
              uint64_t size, uint64_t extra, uint64_t usable, uint32_t stack_id)
{
  struct trace_thread *self = trace_self;
  uint32_t used;

  if (UNLIKELY (self == NULL
                || (used = atomic_load_explicit (&self->committed,
                                                 memory_order_relaxed))
                       == TRACE_CHUNK_RECORDS
                || self->chunk == NULL))
    {
      self = trace_thread_for_append ();
      if (self == NULL)
        return;
      used = atomic_load_explicit (&self->committed, memory_order_relaxed);
    }
  struct memprof_trace_record *record = &self->chunk->records[used];
  record->sequence = trace_next_sequence ();
  record->timestamp = __builtin_ia32_rdtsc ();
  record->pointer = pointer;
  record->result = result;
  record->size = size;
  record->extra = extra;
  record->usable = usable;
  record->stack_id = trace_with_stacks ? stack_id : 0;
  record->op = (uint8_t) op;
  record->flags = (uint8_t) flags;
  record->reserved = 0;
  atomic_store_explicit (&self->committed, used + 1, memory_order_release);
}

/* A deallocation: recorded before the memory is given back.  */
static inline void
trace_deallocation (unsigned op, unsigned flags, void *pointer, uint64_t size,
                    uint64_t extra)
{
  if (trace_is_recording ())
    trace_append (op, flags, (uintptr_t) pointer, 0, size, extra, 0, 0);
}

/* An allocation that returned RESULT (allocator.c: it knows the block's
   usable size and context).  Called only when trace_is_recording ().  */
void allocator_trace_allocation (unsigned op, unsigned flags, uint64_t size,
                                 uint64_t extra, void *result,
                                 uint64_t pointer);

#define TRACE_ALLOCATION(op, flags, size, extra, result)                       \
  do                                                                           \
    {                                                                          \
      if (trace_is_recording ())                                               \
        allocator_trace_allocation (op, flags, size, extra, result, 0);        \
    }                                                                          \
  while (0)

/* ---- Life cycle (trace.c); none of these runs inside malloc ---- */

/* At start-up, with the options read: trace=1 starts recording (into
   buffers; the file and the writer come with trace_start_writer).  */
void trace_initialize (void);
/* From the library's constructor: open the file, start the writer.  */
void trace_start_writer (void);
/* At exit: everything recorded goes into the file, which is renamed.  */
void trace_finish (void);
/* memprof_dump: the file holds everything recorded so far.  */
void trace_sync_for_dump (void);
void trace_fork_prepare (void);
void trace_fork_parent (void);
void trace_fork_child (void);

/* ---- The writer (tracewriter.c), called by trace.c ---- */

/* Open the trace file and start the writer thread; -1 (logged) when it
   cannot.  */
int trace_writer_open (void);

#endif /* MEMPROF_TRACE_H */
