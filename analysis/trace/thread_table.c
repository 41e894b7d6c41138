/* Per-thread attribution of a trace: see thread_table.h and
   docs/trace.md ("memprof trace show").  */

#include "thread_table.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

void
thread_table_init (struct thread_table *table, size_t thread_count)
{
  memset (table, 0, sizeof *table);
  table->count = thread_count;
  table->rows = xcalloc (thread_count + 1, sizeof *table->rows);
}

void
thread_table_free (struct thread_table *table)
{
  free (table->rows);
  free (table->owners);
  memset (table, 0, sizeof *table);
}

static uint32_t *
owner_of (struct thread_table *table, uint64_t slot)
{
  if (slot >= table->owner_capacity)
    {
      size_t capacity = table->owner_capacity ? table->owner_capacity : 1024;
      while (capacity <= slot)
        capacity *= 2;
      table->owners
          = xrealloc (table->owners, capacity * sizeof *table->owners);
      memset (table->owners + table->owner_capacity, 0,
              (capacity - table->owner_capacity) * sizeof *table->owners);
      table->owner_capacity = capacity;
    }
  return &table->owners[slot];
}

/* Take BYTES of SLOT's block away from the thread that made it live.  */
static void
release (struct thread_table *table, uint64_t slot, uint64_t bytes)
{
  uint32_t owner = *owner_of (table, slot);
  if (owner < table->count)
    table->rows[owner].live -= (int64_t) bytes;
}

void
thread_table_step (void *cookie, const struct trace_call *call,
                   const struct trace_step *step, uint64_t live)
{
  struct thread_table *table = cookie;
  uint32_t thread = call->thread;
  if (thread >= table->count)
    return;
  struct thread_row *row = &table->rows[thread];
  row->calls++;
  switch (step->kind)
    {
    case TRACE_STEP_NONE:
      break;
    case TRACE_STEP_ALLOC:
      row->allocated += step->new_size;
      row->live += (int64_t) step->new_size;
      *owner_of (table, step->slot) = thread;
      break;
    case TRACE_STEP_FREE:
      release (table, step->slot, step->old_size);
      break;
    case TRACE_STEP_REALLOC:
      if (!step->from_empty)
        release (table, step->slot, step->old_size);
      if (!step->freed)
        {
          row->allocated += step->new_size;
          row->live += (int64_t) step->new_size;
          *owner_of (table, step->slot) = thread;
        }
      break;
    }
  if (live > table->peak)
    {
      table->peak = live;
      for (size_t i = 0; i < table->count; i++)
        table->rows[i].at_peak
            = table->rows[i].live > 0 ? (uint64_t) table->rows[i].live : 0;
    }
}

static const struct thread_table *sorting;

static int
compare_rows (const void *a, const void *b)
{
  const struct thread_row *x = &sorting->rows[*(const uint32_t *) a];
  const struct thread_row *y = &sorting->rows[*(const uint32_t *) b];
  if (x->at_peak != y->at_peak)
    return x->at_peak > y->at_peak ? -1 : 1;
  if (x->allocated != y->allocated)
    return x->allocated > y->allocated ? -1 : 1;
  return *(const uint32_t *) a < *(const uint32_t *) b ? -1 : 1;
}

void
thread_table_print (FILE *out, const struct thread_table *table,
                    const struct trace_file *trace)
{
  uint32_t *order = xmalloc (table->count * sizeof *order + 1);
  char allocated[32], at_peak[32];
  for (size_t i = 0; i < table->count; i++)
    order[i] = (uint32_t) i;
  sorting = table;
  qsort (order, table->count, sizeof *order, compare_rows);
  sorting = NULL;
  fprintf (out, "  per thread   %-8s %-16s %10s %14s %14s\n", "tid", "name",
           "calls", "allocated", "live at peak");
  for (size_t i = 0; i < table->count; i++)
    {
      const struct thread_row *row = &table->rows[order[i]];
      const char *name = trace_thread_name (trace, order[i]);
      fprintf (
          out, "               %-8" PRIu32 " %-16s %10" PRIu64 " %14s %14s\n",
          trace->threads[order[i]], name[0] ? name : "-", row->calls,
          format_bytes ((double) row->allocated, allocated, sizeof allocated),
          format_bytes ((double) row->at_peak, at_peak, sizeof at_peak));
    }
  free (order);
}
