/* What trace.c (the buffers, the API) and tracewriter.c (the writer
   thread, zstd, the file) share.  */

#ifndef MEMPROF_TRACEWRITER_H
#define MEMPROF_TRACEWRITER_H

#include <pthread.h>

#include "trace.h"

/* Requests to the writer, answered in order: sync, reset, stop.  */
#define TRACE_REQUEST_SYNC 1u
#define TRACE_REQUEST_RESET 2u
#define TRACE_REQUEST_STOP 4u

struct trace_shared
{
  pthread_mutex_t mutex; /* everything below */
  pthread_cond_t work;   /* the writer waits for chunks and requests */
  pthread_cond_t space;  /* threads wait for the writer to catch up */
  pthread_cond_t done;   /* requesters wait for their answer */
  struct trace_chunk *queue_head, *queue_tail;
  size_t queued;      /* chunks queued or being written */
  size_t queue_limit; /* past this many, threads wait */
  struct trace_chunk *free_chunks;
  bool writer_running;
  bool writer_idle;                     /* waiting for work */
  unsigned pending;                     /* TRACE_REQUEST_* asked for */
  uint64_t request_serial, done_serial; /* requests asked, answered */
  int done_status;                      /* of the last answered */
  uint64_t waits;                       /* times a thread waited */
  /* The clocks when the trace started, for its header.  */
  uint64_t start_tsc, start_monotonic, start_realtime;
};

extern struct trace_shared trace_shared;

/* trace.c, for the writer.  */

/* A queued chunk is written: back to the free list.  */
void trace_chunk_written (struct trace_chunk *chunk);
/* Give EMIT the records of every thread's chunk not yet taken (or drop
   them when DISCARD); with ONLY_DEAD, only of threads that have exited,
   whose chunks and entries are then reused.  Returns the number of
   threads with records in the current file.  */
uint32_t trace_collect_threads (
    bool discard, bool only_dead,
    void (*emit) (uint32_t tid, const struct memprof_trace_record *,
                  uint32_t count));

/* The name thread TID had when it last began a chunk, into NAME (16
   bytes); false when no thread of the trace has that id.  */
bool trace_thread_last_name (uint32_t tid, char *name);

/* tracewriter.c, for trace.c.  */

/* Ask the writer for TRACE_REQUEST_* and wait for its answer: 0, or -1
   when the file could not be written.  */
int trace_writer_request (unsigned kind);
/* In a child after fork: the parent's file, thread and zstd state are
   not the child's.  */
void trace_writer_forget (void);

#endif /* MEMPROF_TRACEWRITER_H */
