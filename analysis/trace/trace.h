/* Reading a malloc API trace (formats/traceformat.h,
   docs/trace-format.md) and interpreting it: which call made which block
   live, which freed it, live bytes over the trace's order, and what does
   not add up (frees of unknown pointers, double frees...).  `memprof trace
   show' and `memprof trace2wl' share the interpretation, so that the
   curve one prints is the curve the other's workload replays.  */

#ifndef MEMPROF_ANALYSIS_TRACE_H
#define MEMPROF_ANALYSIS_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "traceformat.h"

/* One decoded call, with the index of its thread.  */
struct trace_call
{
  struct memprof_trace_record record;
  uint32_t thread; /* index into trace_file.threads */
};

struct trace_thread_name
{
  uint32_t tid;
  char name[MEMPROF_TRACE_THREAD_NAME_SIZE];
};

struct trace_file
{
  struct memprof_trace_header header;
  struct trace_call *calls; /* sorted by sequence */
  size_t call_count;
  uint32_t *threads; /* their ids (gettid), in order of first call */
  size_t thread_count;
  /* Their names (version 2 THREAD blocks), the last one given to each
     thread id: NULL for a version 1 trace.  */
  struct trace_thread_name *names;
  size_t name_count, name_capacity;
  bool complete;    /* the END block was read */
  bool synced_only; /* no END: the data ends at a sync (still running) */
  struct memprof_trace_end end; /* when complete */
  /* The last clock reading (a CLOCK, SYNC or END block, or the header's) */
  uint64_t last_tsc, last_monotonic;
  uint64_t compressed_size, decompressed_size;
};

/* Read the trace at PATH.  -1 with a message in ERROR naming the file,
   the byte offset and what was expected there.  */
int trace_read (const char *path, struct trace_file *trace, char *error,
                size_t error_size);
int trace_read_buffer (const uint8_t *data, size_t size, const char *name,
                       struct trace_file *trace, char *error,
                       size_t error_size);
void trace_free (struct trace_file *trace);
/* The name of thread THREAD (an index into threads), or "" when the trace
   does not say.  */
const char *trace_thread_name (const struct trace_file *trace, uint32_t thread);

/* Nanoseconds since the trace started, of time stamp counter TSC
   (converted with the clock readings the file holds).  */
double trace_ns_of (const struct trace_file *trace, uint64_t tsc);
/* The time stamp counter's frequency, from the clock readings; 0 when
   the trace is too short to tell.  */
double trace_tsc_hz (const struct trace_file *trace);

const char *trace_op_name (unsigned op);
/* Is OP an allocation, a deallocation, a reallocation?  */
bool trace_op_allocates (unsigned op);

/* ---- The interpretation ---- */

/* What one step of the model did.  */
enum trace_step_kind
{
  TRACE_STEP_NONE,    /* nothing: a failed call, free (NULL), a repair */
  TRACE_STEP_ALLOC,   /* SLOT became live with NEW_SIZE bytes */
  TRACE_STEP_FREE,    /* SLOT (OLD_SIZE bytes) was freed */
  TRACE_STEP_REALLOC, /* SLOT went from OLD_SIZE to NEW_SIZE bytes (from
                         an empty slot when FROM_EMPTY; freed when FREED) */
};

struct trace_step
{
  enum trace_step_kind kind;
  uint64_t slot;
  uint64_t old_size, new_size;
  bool from_empty; /* realloc (NULL, n), or of an unknown pointer */
  bool freed;      /* realloc (p, 0) that returned NULL */
  /* An allocation returned an address the model held live (a free that
     was not recorded, e.g. while paused): that block is dropped first. */
  bool dropped;
  uint64_t dropped_slot, dropped_size;
};

/* Counts of what did not add up, each repaired as docs/trace.md says.  */
struct trace_problems
{
  uint64_t unknown_frees;    /* free/delete of an address never live */
  uint64_t double_frees;     /* of an address already freed */
  uint64_t unknown_reallocs; /* realloc of an address not live */
  uint64_t reused_live;      /* an allocation returned a live address */
  uint64_t failed_calls;     /* allocations that returned NULL */
  uint64_t null_frees;       /* free (NULL), delete (nullptr) */
};

struct trace_model;

/* A model that hands out slots per thread (a slot freed by a thread is
   reused by that thread's later allocations).  */
struct trace_model *trace_model_new (size_t thread_count);
void trace_model_free (struct trace_model *model);

/* Walk the calls of TRACE in the model's order: every call at its
   sequence, and for realloc also the moment before it (its extra), when
   its old address is given up.  STEP is called for each call (not for
   the moment before a realloc) with what it did; LIVE after it.  Returns
   the problems counted.  */
typedef void (*trace_step_fn) (void *cookie, const struct trace_call *call,
                               const struct trace_step *step, uint64_t live);
void trace_model_run (struct trace_model *model, const struct trace_file *trace,
                      trace_step_fn step, void *cookie);
const struct trace_problems *trace_model_problems (const struct trace_model *);
uint64_t trace_model_slot_count (const struct trace_model *model);
uint64_t trace_model_peak (const struct trace_model *model,
                           uint64_t *at_sequence);
uint64_t trace_model_live (const struct trace_model *model);

/* The bytes a successful allocation call asked for.  */
uint64_t trace_requested_bytes (const struct memprof_trace_record *record);

#endif /* MEMPROF_ANALYSIS_TRACE_H */
