/* memprof trace show: a malloc API trace (trace=1), one call per line,
   and a summary: calls per operation, threads, duration, the peak of
   live requested bytes, and what does not add up.  */

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "thread_table.h"
#include "trace.h"
#include "util.h"

static const char usage[]
    = "usage: memprof trace show [options] TRACE\n"
      "\n"
      "Print the calls a trace recorded (MEMPROF_OPTIONS=trace=1 writes it,\n"
      "as memprof.trace.PID.zst), one per line in the order they happened,\n"
      "then a summary: calls per operation, threads, duration, the peak of\n"
      "live requested bytes, and the calls that do not add up (frees of\n"
      "unknown pointers, double frees), which `memprof trace2wl' repairs.\n"
      "\n"
      "  --summary        the summary only\n"
      "  --limit=N        at most N calls (default: all)\n"
      "  --curve=FILE     write the live-bytes curve to FILE as CSV:\n"
      "                   sequence,live_bytes after each call that changed\n"
      "                   them (the curve `memprof replay' reproduces)\n"
      "\n"
      "Each line: sequence number, seconds since the trace started, thread\n"
      "(t0 is the first to call), the call with its arguments and result,\n"
      "the usable size of the block returned and, with trace_stacks=1, the\n"
      "allocation's stack id in the profile.\n"
      "\n"
      "Example:\n"
      "  MEMPROF_OPTIONS=trace=1 ./app && memprof trace show --limit=20 "
      "memprof.trace.*.zst\n";

static void
print_call (const struct trace_file *trace, const struct trace_call *call)
{
  const struct memprof_trace_record *r = &call->record;
  unsigned op = r->op;
  char args[160];

  switch (op)
    {
    case MEMPROF_TRACE_FREE:
      snprintf (args, sizeof args, "(0x%" PRIx64 ")", r->pointer);
      break;
    case MEMPROF_TRACE_REALLOC:
    case MEMPROF_TRACE_REALLOCARRAY:
      snprintf (args, sizeof args, "(0x%" PRIx64 ", %" PRIu64 ")", r->pointer,
                r->size);
      break;
    case MEMPROF_TRACE_CALLOC:
      snprintf (args, sizeof args, "(%" PRIu64 ", %" PRIu64 ")", r->extra,
                r->size);
      break;
    case MEMPROF_TRACE_ALIGNED_ALLOC:
    case MEMPROF_TRACE_POSIX_MEMALIGN:
    case MEMPROF_TRACE_MEMALIGN:
      snprintf (args, sizeof args, "(%" PRIu64 ", %" PRIu64 ")", r->extra,
                r->size);
      break;
    case MEMPROF_TRACE_NEW:
    case MEMPROF_TRACE_NEW_ARRAY:
      snprintf (args, sizeof args, "(%" PRIu64 "%s%s)", r->size,
                r->flags & MEMPROF_TRACE_ALIGNED ? ", align_val_t" : "",
                r->flags & MEMPROF_TRACE_NOTHROW ? ", nothrow" : "");
      if (r->flags & MEMPROF_TRACE_ALIGNED)
        snprintf (args, sizeof args, "(%" PRIu64 ", align %" PRIu64 "%s)",
                  r->size, r->extra,
                  r->flags & MEMPROF_TRACE_NOTHROW ? ", nothrow" : "");
      break;
    case MEMPROF_TRACE_DELETE:
    case MEMPROF_TRACE_DELETE_ARRAY:
      {
        int n = snprintf (args, sizeof args, "(0x%" PRIx64, r->pointer);
        if (r->flags & MEMPROF_TRACE_SIZED)
          n += snprintf (args + n, sizeof args - n, ", size %" PRIu64, r->size);
        if (r->flags & MEMPROF_TRACE_ALIGNED)
          n += snprintf (args + n, sizeof args - n, ", align %" PRIu64,
                         r->extra);
        snprintf (args + n, sizeof args - n, "%s)",
                  r->flags & MEMPROF_TRACE_NOTHROW ? ", nothrow" : "");
      }
      break;
    default:
      snprintf (args, sizeof args, "(%" PRIu64 ")", r->size);
      break;
    }
  printf ("%10" PRIu64 " %12.6f t%-3u %s%s", r->sequence,
          trace_ns_of (trace, r->timestamp) / 1e9, call->thread,
          trace_op_name (op), args);
  if (memprof_trace_op_returns_pointer (op))
    printf (" = 0x%" PRIx64, r->result);
  if (r->usable != 0)
    printf (" usable %" PRIu64, r->usable);
  if (r->stack_id != 0)
    printf (" stack %u", r->stack_id);
  putchar ('\n');
}

struct curve_writer
{
  struct buffer *out; /* NULL: no curve wanted */
  uint64_t last;
  struct thread_table *threads; /* fed the same steps */
};

static void
write_curve_point (void *cookie, const struct trace_call *call,
                   const struct trace_step *step, uint64_t live)
{
  struct curve_writer *writer = cookie;
  thread_table_step (writer->threads, call, step, live);
  if (writer->out != NULL && live != writer->last)
    buffer_printf (writer->out, "%" PRIu64 ",%" PRIu64 "\n",
                   call->record.sequence, live);
  writer->last = live;
}

static void
print_summary (const char *path, const struct trace_file *trace,
               const struct trace_model *model)
{
  uint64_t per_op[MEMPROF_TRACE_OP_COUNT] = { 0 };
  const struct trace_problems *problems = trace_model_problems (model);
  uint64_t peak_sequence, peak = trace_model_peak (model, &peak_sequence);
  uint64_t live = trace_model_live (model);
  double hz = trace_tsc_hz (trace);
  double duration
      = (double) (trace->last_monotonic - trace->header.start_monotonic) / 1e9;
  char human[32];

  for (size_t i = 0; i < trace->call_count; i++)
    per_op[trace->calls[i].record.op]++;
  printf ("trace %s: pid %u, format version %u, %s\n", path, trace->header.pid,
          trace->header.version,
          trace->complete ? "complete"
                          : "still being written: complete up to its last "
                            "sync");
  printf ("  duration     %.6f s", duration);
  if (hz > 0)
    printf (" (time stamp counter at %.3f GHz)", hz / 1e9);
  printf ("\n  threads      %zu\n", trace->thread_count);
  printf ("  calls        %zu\n", trace->call_count);
  for (unsigned op = 1; op < MEMPROF_TRACE_OP_COUNT; op++)
    if (per_op[op] != 0)
      printf ("    %-16s %" PRIu64 "\n", trace_op_name (op), per_op[op]);
  printf ("  peak live    %" PRIu64 " bytes (%s) after sequence %" PRIu64 "\n",
          peak, format_bytes ((double) peak, human, sizeof human),
          peak_sequence);
  printf ("  live at end  %" PRIu64 " bytes (%s)\n", live,
          format_bytes ((double) live, human, sizeof human));
  printf ("  slots        %" PRIu64 " (pointer slots a workload needs)\n",
          trace_model_slot_count (model));
  printf ("  repaired     %" PRIu64 " frees of unknown pointers, %" PRIu64
          " double frees, %" PRIu64 " reallocs of unknown pointers, %" PRIu64
          " allocations at a live address\n",
          problems->unknown_frees, problems->double_frees,
          problems->unknown_reallocs, problems->reused_live);
  printf ("  not replayed %" PRIu64 " failed calls, %" PRIu64
          " frees of NULL\n",
          problems->failed_calls, problems->null_frees);
}

static int
trace_show (int argc, char **argv)
{
  bool summary_only = false;
  const char *path = NULL, *curve_path = NULL;
  long long limit = -1;

  for (int i = 1; i < argc; i++)
    {
      const char *arg = argv[i];
      if (strcmp (arg, "--summary") == 0)
        summary_only = true;
      else if (strncmp (arg, "--limit=", 8) == 0
               || strcmp (arg, "--limit") == 0)
        {
          const char *value = arg[7] == '=' ? arg + 8 : NULL;
          char *end;
          if (value == NULL)
            {
              if (i + 1 >= argc)
                command_usage_error ("trace show", "--limit needs a number");
              value = argv[++i];
            }
          limit = strtoll (value, &end, 10);
          if (*value == '\0' || *end != '\0' || limit < 0)
            command_usage_error ("trace show",
                                 "--limit needs a number of calls, not '%s'",
                                 value);
        }
      else if (strncmp (arg, "--curve=", 8) == 0)
        curve_path = arg + 8;
      else if (arg[0] == '-' && arg[1] != '\0')
        command_usage_error ("trace show", "unknown option '%s'", arg);
      else if (path != NULL)
        command_usage_error ("trace show", "one trace at a time");
      else
        path = arg;
    }
  if (path == NULL)
    command_usage_error ("trace show", "no trace given");

  struct trace_file trace;
  char error[1024];
  if (trace_read (path, &trace, error, sizeof error) != 0)
    die (EXIT_BAD_INPUT, "%s", error);
  if (!trace.complete)
    warn ("%s: the trace has no end (the program is still running, or did "
          "not exit normally): showing the calls up to its last sync",
          path);
  if (!summary_only)
    for (size_t i = 0;
         i < trace.call_count && (limit < 0 || (long long) i < limit); i++)
      print_call (&trace, &trace.calls[i]);

  /* The curve is written whole when complete (write_file_atomically):
     a failed run never leaves half of it under its name.  */
  struct buffer curve = { 0 };
  struct thread_table threads;
  thread_table_init (&threads, trace.thread_count);
  struct curve_writer writer
      = { curve_path != NULL ? &curve : NULL, 0, &threads };
  buffer_printf (&curve, "sequence,live_bytes\n");
  struct trace_model *model = trace_model_new (trace.thread_count);
  trace_model_run (model, &trace, write_curve_point, &writer);
  if (curve_path != NULL
      && write_file_atomically (curve_path, curve.data, curve.length, error,
                                sizeof error)
             != 0)
    die (1, "%s", error);
  buffer_free (&curve);
  print_summary (path, &trace, model);
  thread_table_print (stdout, &threads, &trace);
  thread_table_free (&threads);
  trace_model_free (model);
  trace_free (&trace);
  return 0;
}

int
cmd_trace (int argc, char **argv)
{
  if (argc < 2 || strcmp (argv[1], "--help") == 0
      || strcmp (argv[1], "-h") == 0)
    {
      fputs (usage, argc < 2 ? stderr : stdout);
      return argc < 2 ? EXIT_BAD_INPUT : 0;
    }
  if (strcmp (argv[1], "show") != 0)
    command_usage_error ("trace", "'%s' is not a trace command (show)",
                         argv[1]);
  if (command_help_requested (argc - 1, argv + 1))
    {
      fputs (usage, stdout);
      return 0;
    }
  return trace_show (argc - 1, argv + 1);
}
