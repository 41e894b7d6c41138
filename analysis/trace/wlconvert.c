/* Converting a trace into a workload (workload.h): what `memprof
   trace2wl' does, and what the trace fuzz target checks.  The trace's
   calls are interpreted in their order (trace.h's model: slots instead of
   addresses, a slot freed by a thread reused by that thread's later
   allocations); each goes to its thread's list, preceded by a wait when
   it uses a slot that another thread used last, so that the replay frees
   a block only after the thread that allocated it has done so (glibc's
   trace2wl SYNC_W/SYNC_R).  */

#include <stdlib.h>
#include <string.h>

#include "trace.h"
#include "util.h"
#include "workload.h"

struct converter
{
  size_t thread_count;
  struct buffer *streams;      /* per thread */
  uint64_t *previous_sequence; /* per thread */
  uint64_t *op_counts;         /* per thread */
  uint32_t **waited;           /* [thread][other]: operations known done */
  uint64_t *slot_last;         /* (thread + 1) << 32 | its operations */
  uint64_t slot_capacity;
  uint64_t waits;
  bool too_many_ops;
};

static void
ensure_slot (struct converter *converter, uint64_t slot)
{
  if (slot < converter->slot_capacity)
    return;
  uint64_t capacity
      = converter->slot_capacity ? converter->slot_capacity : 1024;
  while (capacity <= slot)
    capacity *= 2;
  converter->slot_last
      = xrealloc (converter->slot_last, capacity * sizeof (uint64_t));
  memset (converter->slot_last + converter->slot_capacity, 0,
          (capacity - converter->slot_capacity) * sizeof (uint64_t));
  converter->slot_capacity = capacity;
}

/* THREAD is about to use SLOT: wait for the thread that used it last.  */
static void
order_after_last_use (struct converter *converter, uint32_t thread,
                      uint64_t slot)
{
  uint64_t last;
  ensure_slot (converter, slot);
  last = converter->slot_last[slot];
  if (last == 0)
    return;
  uint32_t owner = (uint32_t) (last >> 32) - 1;
  uint32_t owner_ops = (uint32_t) last;
  if (owner == thread)
    return;
  if (converter->waited[thread] == NULL)
    converter->waited[thread]
        = xcalloc (converter->thread_count, sizeof (uint32_t));
  if (converter->waited[thread][owner] >= owner_ops)
    return;
  converter->waited[thread][owner] = owner_ops;
  struct workload_op wait
      = { .code = WORKLOAD_WAIT, .wait_thread = owner, .wait_ops = owner_ops };
  workload_encode_op (&converter->streams[thread], &wait,
                      &converter->previous_sequence[thread]);
  converter->waits++;
}

static void
emit (struct converter *converter, uint32_t thread, struct workload_op *op)
{
  order_after_last_use (converter, thread, op->slot);
  workload_encode_op (&converter->streams[thread], op,
                      &converter->previous_sequence[thread]);
  converter->op_counts[thread]++;
  if (converter->op_counts[thread] >= WORKLOAD_THREAD_OPS_MAX)
    converter->too_many_ops = true;
  converter->slot_last[op->slot]
      = ((uint64_t) thread + 1) << 32 | (uint32_t) converter->op_counts[thread];
}

static void
convert_step (void *cookie, const struct trace_call *call,
              const struct trace_step *step, uint64_t live)
{
  struct converter *converter = cookie;
  const struct memprof_trace_record *r = &call->record;
  struct workload_op op = { .sequence = r->sequence, .slot = step->slot };
  (void) live;

  if (step->dropped)
    {
      struct workload_op drop = { .code = MEMPROF_TRACE_FREE,
                                  .sequence = r->sequence,
                                  .slot = step->dropped_slot };
      emit (converter, call->thread, &drop);
    }
  switch (step->kind)
    {
    case TRACE_STEP_NONE:
      return;
    case TRACE_STEP_REALLOC:
      /* realloc (NULL, 0) is malloc (0): a live block of no bytes.  */
      op.code = step->from_empty && r->size == 0 ? MEMPROF_TRACE_MALLOC
                                                 : MEMPROF_TRACE_REALLOC;
      op.size = r->size;
      break;
    case TRACE_STEP_FREE:
      op.code = r->op;
      op.flags = r->flags;
      if (r->op == MEMPROF_TRACE_DELETE || r->op == MEMPROF_TRACE_DELETE_ARRAY)
        {
          op.size = r->flags & MEMPROF_TRACE_SIZED ? r->size : 0;
          op.alignment = r->flags & MEMPROF_TRACE_ALIGNED ? r->extra : 0;
        }
      break;
    case TRACE_STEP_ALLOC:
      op.code = r->op;
      op.flags = r->flags;
      op.size = r->size;
      switch (r->op)
        {
        case MEMPROF_TRACE_CALLOC:
          op.count = r->extra;
          break;
        case MEMPROF_TRACE_ALIGNED_ALLOC:
        case MEMPROF_TRACE_POSIX_MEMALIGN:
        case MEMPROF_TRACE_MEMALIGN:
          op.alignment = r->extra;
          break;
        case MEMPROF_TRACE_NEW:
        case MEMPROF_TRACE_NEW_ARRAY:
          op.alignment = r->flags & MEMPROF_TRACE_ALIGNED ? r->extra : 0;
          break;
        default:
          break;
        }
      break;
    }
  /* An alignment the replay could not ask for (the runtime records what
     the program asked, which may be no power of two for memalign) is
     rounded up as glibc does.  */
  if (op.alignment != 0 && (op.alignment & (op.alignment - 1)) != 0)
    {
      uint64_t rounded = 1;
      while (rounded < op.alignment && rounded < (1u << 30))
        rounded <<= 1;
      op.alignment = rounded;
    }
  if (op.alignment > (1u << 30))
    op.alignment = 1u << 30;
  /* Only a damaged trace has new with the sized flag, or an alignment of
     0.  */
  if (op.code == MEMPROF_TRACE_NEW || op.code == MEMPROF_TRACE_NEW_ARRAY)
    op.flags &= MEMPROF_TRACE_NOTHROW | MEMPROF_TRACE_ALIGNED;
  bool aligned = r->op == MEMPROF_TRACE_ALIGNED_ALLOC
                 || r->op == MEMPROF_TRACE_POSIX_MEMALIGN
                 || r->op == MEMPROF_TRACE_MEMALIGN
                 || (op.flags & MEMPROF_TRACE_ALIGNED);
  if (aligned && op.alignment == 0 && step->kind != TRACE_STEP_REALLOC)
    op.alignment = 1;
  emit (converter, call->thread, &op);
}

int
workload_from_trace (const struct trace_file *trace, struct buffer *file,
                     struct workload_conversion *result, char *error,
                     size_t error_size)
{
  if (trace->thread_count > WORKLOAD_THREADS_MAX)
    {
      snprintf (error, error_size,
                "%zu threads; a workload has at most %d (each is a thread of "
                "the replay)",
                trace->thread_count, WORKLOAD_THREADS_MAX);
      return -1;
    }
  size_t threads = trace->thread_count ? trace->thread_count : 1;
  struct converter converter = {
    .thread_count = threads,
    .streams = xcalloc (threads, sizeof (struct buffer)),
    .previous_sequence = xcalloc (threads, sizeof (uint64_t)),
    .op_counts = xcalloc (threads, sizeof (uint64_t)),
    .waited = xcalloc (threads, sizeof (uint32_t *)),
  };
  struct trace_model *model = trace_model_new (threads);
  int status = -1;
  trace_model_run (model, trace, convert_step, &converter);
  if (converter.too_many_ops)
    {
      snprintf (error, error_size,
                "a thread makes more than %llu calls: too many for one "
                "workload",
                (unsigned long long) WORKLOAD_THREAD_OPS_MAX);
      goto done;
    }

  struct workload_header header = {
    .magic = WORKLOAD_MAGIC,
    .version = WORKLOAD_VERSION,
    .header_size = sizeof header,
    .thread_count = (uint32_t) threads,
    .slot_count = trace_model_slot_count (model),
    .peak_live = trace_model_peak (model, NULL),
    .final_live = trace_model_live (model),
    .duration_ns = trace->last_monotonic - trace->header.start_monotonic,
  };
  uint64_t offset = sizeof header + threads * sizeof (struct workload_thread);
  for (size_t i = 0; i < threads; i++)
    header.op_count += converter.op_counts[i];
  buffer_append (file, &header, sizeof header);
  for (size_t i = 0; i < threads; i++)
    {
      struct workload_thread entry = {
        .tid = trace->thread_count ? trace->threads[i] : 0,
        .offset = offset,
        .size = converter.streams[i].length,
        .op_count = converter.op_counts[i],
      };
      buffer_append (file, &entry, sizeof entry);
      offset += entry.size;
    }
  for (size_t i = 0; i < threads; i++)
    if (converter.streams[i].length > 0)
      buffer_append (file, converter.streams[i].data,
                     converter.streams[i].length);
  result->problems = *trace_model_problems (model);
  result->op_count = header.op_count;
  result->slot_count = header.slot_count;
  result->waits = converter.waits;
  result->peak_live = header.peak_live;
  status = 0;
done:
  for (size_t i = 0; i < threads; i++)
    {
      buffer_free (&converter.streams[i]);
      free (converter.waited[i]);
    }
  free (converter.streams);
  free (converter.previous_sequence);
  free (converter.op_counts);
  free (converter.waited);
  free (converter.slot_last);
  trace_model_free (model);
  return status;
}
