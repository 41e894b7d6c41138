/* Fuzz target: the trace reader (trace_read_buffer: zstd streaming
   decompression, the header, every block and every record's encoding),
   the model that interprets the calls, and the conversion into a
   workload.  Whatever input reads must give calls sorted by distinct
   sequence numbers, with valid operations and thread indices; its
   workload must pass the replay's own strict check (workload_walk), and
   the live-bytes curve and peak that check computes must be the model's.
   An input that does not read must give a message naming it.  Seeds:
   corpus/trace, traces of small programs written by the runtime.

   Half of the mutations are made to the decompressed trace, compressed
   again (LLVMFuzzerCustomMutator, as fuzz_mprof.c does).  */

#include <zstd.h>

#include "fuzz.h"
#include "trace.h"
#include "util.h"
#include "workload.h"

static const char name[] = "fuzz.trace.zst";
extern uint64_t trace_read_limit;

size_t LLVMFuzzerMutate (uint8_t *data, size_t size, size_t max_size)
    __attribute__ ((weak));
size_t LLVMFuzzerCustomMutator (uint8_t *data, size_t size, size_t max_size,
                                unsigned int seed);

#define MUTATOR_MAX_PAYLOAD (64 * 1024)

size_t
LLVMFuzzerCustomMutator (uint8_t *data, size_t size, size_t max_size,
                         unsigned int seed)
{
  if (seed % 2 == 0)
    return LLVMFuzzerMutate (data, size, max_size);
  uint8_t *payload = malloc (MUTATOR_MAX_PAYLOAD);
  size_t payload_size
      = ZSTD_decompress (payload, MUTATOR_MAX_PAYLOAD, data, size);
  if (ZSTD_isError (payload_size))
    {
      free (payload);
      return LLVMFuzzerMutate (data, size, max_size);
    }
  payload_size = LLVMFuzzerMutate (payload, payload_size, MUTATOR_MAX_PAYLOAD);
  size_t bound = ZSTD_compressBound (payload_size);
  uint8_t *compressed = malloc (bound);
  size_t compressed_size
      = ZSTD_compress (compressed, bound, payload, payload_size, 1);
  free (payload);
  if (ZSTD_isError (compressed_size) || compressed_size > max_size)
    {
      free (compressed);
      return LLVMFuzzerMutate (data, size, max_size);
    }
  memcpy (data, compressed, compressed_size);
  free (compressed);
  return compressed_size;
}

struct points
{
  uint64_t *items; /* sequence, live, sequence, live... */
  size_t count, capacity;
};

static void
keep (struct points *points, uint64_t sequence, uint64_t live)
{
  if (points->count + 2 > points->capacity)
    {
      points->capacity = points->capacity ? 2 * points->capacity : 64;
      points->items
          = realloc (points->items, points->capacity * sizeof (uint64_t));
    }
  points->items[points->count++] = sequence;
  points->items[points->count++] = live;
}

struct model_curve
{
  struct points points;
  uint64_t last;
};

static void
model_step (void *cookie, const struct trace_call *call,
            const struct trace_step *step, uint64_t live)
{
  struct model_curve *curve = cookie;
  (void) step;
  if (live != curve->last)
    keep (&curve->points, call->record.sequence, live);
  curve->last = live;
}

static void
walk_point (void *cookie, uint64_t sequence, uint64_t live)
{
  keep (cookie, sequence, live);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  struct trace_file trace;
  char error[512];

  trace_read_limit = 16 << 20;
  error[0] = '\0';
  if (trace_read_buffer (data, size, name, &trace, error, sizeof error) != 0)
    {
      fuzz_check_error (error, name);
      return 0;
    }
  for (size_t i = 0; i < trace.call_count; i++)
    {
      const struct trace_call *call = &trace.calls[i];
      if (i > 0 && call->record.sequence <= trace.calls[i - 1].record.sequence)
        fuzz_fail ("call %zu: sequence %llu after %llu", i,
                   (unsigned long long) call->record.sequence,
                   (unsigned long long) trace.calls[i - 1].record.sequence);
      if (call->thread >= trace.thread_count || call->record.op == 0
          || call->record.op >= MEMPROF_TRACE_OP_COUNT)
        fuzz_fail ("call %zu: thread %u of %zu, operation %u", i, call->thread,
                   trace.thread_count, call->record.op);
    }

  struct model_curve model_curve = { { NULL, 0, 0 }, 0 };
  struct trace_model *model = trace_model_new (trace.thread_count);
  trace_model_run (model, &trace, model_step, &model_curve);
  uint64_t peak = trace_model_peak (model, NULL);
  trace_model_free (model);

  struct buffer file = { 0 };
  struct workload_conversion conversion;
  if (workload_from_trace (&trace, &file, &conversion, error, sizeof error)
      == 0)
    {
      struct workload workload;
      struct points walked = { NULL, 0, 0 };
      uint64_t walked_peak = 0;
      if (workload_open_buffer ((const uint8_t *) file.data, file.length,
                                "fuzz.wl", &workload, error, sizeof error)
          != 0)
        fuzz_fail ("the converted workload does not open: %s", error);
      if (workload_walk (&workload, true, NULL, walk_point, &walked,
                         &walked_peak, error, sizeof error)
          != 0)
        fuzz_fail ("the converted workload fails the check: %s", error);
      if (walked_peak != peak)
        fuzz_fail ("the workload's peak %llu is not the trace's %llu",
                   (unsigned long long) walked_peak, (unsigned long long) peak);
      if (walked.count != model_curve.points.count
          || (walked.count > 0
              && memcmp (walked.items, model_curve.points.items,
                         walked.count * sizeof (uint64_t))
                     != 0))
        fuzz_fail ("the workload's live-bytes curve (%zu points) is not the "
                   "trace's (%zu)",
                   walked.count / 2, model_curve.points.count / 2);
      free (walked.items);
      workload_close (&workload);
    }
  buffer_free (&file);
  free (model_curve.points.items);
  trace_free (&trace);
  return 0;
}
