/* Per-thread attribution of a malloc API trace, for `memprof trace show':
   each thread's calls, the bytes it allocated, and the bytes it had live
   (allocated by it and not yet freed, by whichever thread) at the trace's
   peak.  Fed by the model's steps (trace_model_run).  */

#ifndef MEMPROF_ANALYSIS_THREAD_TABLE_H
#define MEMPROF_ANALYSIS_THREAD_TABLE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "trace.h"

struct thread_row
{
  uint64_t calls;
  uint64_t allocated; /* requested bytes of its allocations and reallocs */
  int64_t live;       /* bytes of its blocks live now */
  uint64_t at_peak;   /* of them, live at the trace's peak */
};

struct thread_table
{
  struct thread_row *rows; /* one per trace thread */
  size_t count;
  uint32_t *owners; /* by slot: the thread that made it live */
  size_t owner_capacity;
  uint64_t peak;
};

void thread_table_init (struct thread_table *table, size_t thread_count);
void thread_table_free (struct thread_table *table);
/* A trace_step_fn: COOKIE is the table.  */
void thread_table_step (void *cookie, const struct trace_call *call,
                        const struct trace_step *step, uint64_t live);
/* The table, one line per thread, the most bytes at the peak first.  */
void thread_table_print (FILE *out, const struct thread_table *table,
                         const struct trace_file *trace);

#endif /* MEMPROF_ANALYSIS_THREAD_TABLE_H */
