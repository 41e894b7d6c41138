/* memprof trace2wl: a trace into a workload that `memprof replay' runs
   (workload_from_trace in wlconvert.c does the work).  */

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "trace.h"
#include "util.h"
#include "workload.h"

static const char usage[]
    = "usage: memprof trace2wl TRACE -o WORKLOAD\n"
      "\n"
      "Turn a malloc API trace (MEMPROF_OPTIONS=trace=1) into a workload "
      "for\n"
      "`memprof replay': per thread, its calls with pointer slots instead of\n"
      "addresses, and waits where one thread used a block another thread\n"
      "allocated or reallocated before it.  Calls that do not add up are\n"
      "repaired and counted: a free of an unknown pointer or a double free\n"
      "is dropped, a realloc of an unknown pointer becomes realloc (NULL, n),\n"
      "an allocation that returns an address still live drops the block\n"
      "held there first.  Failed calls and frees of NULL are not replayed.\n"
      "\n"
      "  -o FILE, --output=FILE  the workload to write (uncompressed; written\n"
      "                          under a temporary name and renamed)\n"
      "  --quiet                 no report\n"
      "\n"
      "Example:\n"
      "  memprof trace2wl memprof.trace.1234.zst -o app.wl && memprof replay "
      "app.wl\n";

int
cmd_trace2wl (int argc, char **argv)
{
  const char *input = NULL, *output = NULL;
  bool quiet = false;

  if (command_help_requested (argc, argv))
    {
      fputs (usage, stdout);
      return 0;
    }
  for (int i = 1; i < argc; i++)
    {
      const char *arg = argv[i];
      if (strcmp (arg, "-o") == 0 || strcmp (arg, "--output") == 0)
        {
          if (i + 1 >= argc)
            command_usage_error ("trace2wl", "%s needs a file name", arg);
          output = argv[++i];
        }
      else if (strncmp (arg, "--output=", 9) == 0)
        output = arg + 9;
      else if (strcmp (arg, "--quiet") == 0)
        quiet = true;
      else if (arg[0] == '-' && arg[1] != '\0')
        command_usage_error ("trace2wl", "unknown option '%s'", arg);
      else if (input != NULL)
        command_usage_error ("trace2wl", "one trace at a time");
      else
        input = arg;
    }
  if (input == NULL)
    command_usage_error ("trace2wl", "no trace given");
  if (output == NULL)
    command_usage_error ("trace2wl", "no output file (-o FILE)");

  struct trace_file trace;
  char error[1024];
  if (trace_read (input, &trace, error, sizeof error) != 0)
    die (EXIT_BAD_INPUT, "%s", error);
  if (!trace.complete)
    warn ("%s: the trace has no end: converting the calls up to its last "
          "sync",
          input);
  struct buffer file = { 0 };
  struct workload_conversion conversion;
  if (workload_from_trace (&trace, &file, &conversion, error, sizeof error)
      != 0)
    die (EXIT_BAD_INPUT, "%s: %s", input, error);
  if (write_file_atomically (output, file.data, file.length, error,
                             sizeof error)
      != 0)
    die (1, "%s", error);

  if (!quiet)
    {
      const struct trace_problems *problems = &conversion.problems;
      char human[32];
      fprintf (
          stderr,
          "memprof: trace2wl: %s: %zu calls of %zu threads into %s: %llu "
          "operations, %llu slots, %llu waits; peak live %s\n",
          input, trace.call_count, trace.thread_count, output,
          (unsigned long long) conversion.op_count,
          (unsigned long long) conversion.slot_count,
          (unsigned long long) conversion.waits,
          format_bytes ((double) conversion.peak_live, human, sizeof human));
      fprintf (stderr,
               "memprof: trace2wl: repaired: %" PRIu64
               " frees of unknown pointers, %" PRIu64 " double frees, %" PRIu64
               " reallocs of unknown pointers, %" PRIu64
               " allocations at a live address; not replayed: %" PRIu64
               " failed calls, %" PRIu64 " frees of NULL\n",
               problems->unknown_frees, problems->double_frees,
               problems->unknown_reallocs, problems->reused_live,
               problems->failed_calls, problems->null_frees);
    }
  buffer_free (&file);
  trace_free (&trace);
  return 0;
}
