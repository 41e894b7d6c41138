/* memprof check: a memory gate for CI.  Limits on a profile's totals
   (bytes allocated, allocations, bytes live at exit), on any one
   context's bytes, and on the growth from a baseline profile; each limit
   broken is a line that names it, the figure, and the context most to
   blame, and the exit status is 3.  Contexts are matched with the
   baseline as `memprof diff' matches them (session_context_key).  */

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "emit.h"
#include "session.h"
#include "util.h"

/* The exit status when a limit is broken (0 when none is; 2 for bad
   input or usage, as every command).  */
#define EXIT_LIMIT_BROKEN 3

static const char usage[]
    = "usage: memprof check [limits] [options] PROFILE...\n"
      "\n"
      "A memory gate for CI: checks the profiles (merged) against limits "
      "and exits\n"
      "with 3 when one is broken, naming the limit, the figure and the "
      "context\n"
      "most to blame; 0 when all hold.\n"
      "\n"
      "Limits (SIZE: bytes, or with a unit: K, M, G or KiB, MiB, GiB are "
      "1024-based,\n"
      "KB, MB, GB 1000-based; N: a count):\n"
      "  --max-bytes=SIZE          bytes allocated in all, over the run\n"
      "  --max-allocs=N            allocation calls in all\n"
      "  --max-live-at-exit=SIZE   bytes still allocated at exit (leaks; "
      "needs the\n"
      "                            side file, memprof.extra.PID)\n"
      "  --max-context-bytes=SIZE  bytes allocated by any one context\n"
      "  --baseline=OLD            a profile of the same program before the "
      "change\n"
      "                            (several files: OLD1,OLD2 are merged)\n"
      "  --max-growth=PERCENT      with --baseline: how much bytes "
      "allocated,\n"
      "                            allocations and bytes live at exit may "
      "grow\n"
      "                            (default 10%)\n"
      "\n"
      "  --binary=FILE     symbolize with FILE, to name contexts (give the "
      "old and\n"
      "                    the new binary with --baseline)\n"
      "  --no-libraries    do not look for the program's shared "
      "libraries\n"
      "  --format=text|json  (default text)\n"
      "\n"
      "Examples:\n"
      "  memprof check --max-bytes=64MiB --max-live-at-exit=0 "
      "memprof.profraw.1234\n"
      "  memprof check --baseline=main.mprof --max-growth=5% --binary=./app "
      "\\\n"
      "      memprof.profraw.1234\n";

enum check_metric
{
  CHECK_BYTES,
  CHECK_ALLOCS,
  CHECK_LIVE
};

static const char *const metric_names[]
    = { "bytes allocated", "allocations", "bytes live at exit" };

static double
metric_of (const struct profile_context *context, enum check_metric metric)
{
  switch (metric)
    {
    case CHECK_BYTES:
      return (double) context->mib.total_size;
    case CHECK_ALLOCS:
      return context->mib.alloc_count;
    case CHECK_LIVE:
      return (double) context->extra.live_bytes;
    }
  return 0;
}

static double
metric_total (const struct profile *profile, enum check_metric metric)
{
  double total = 0;
  for (size_t c = 0; c < profile->context_count; c++)
    total += metric_of (&profile->contexts[c], metric);
  return total;
}

/* VALUE of OPTION as a size in bytes ("64MiB", "1.5G", "4096").  */
static double
parse_size (const char *option, const char *value)
{
  static const struct
  {
    const char *suffix;
    double factor;
  } units[] = { { "", 1 },           { "B", 1 },
                { "K", 1024 },       { "KiB", 1024 },
                { "KB", 1e3 },       { "M", 1048576 },
                { "MiB", 1048576 },  { "MB", 1e6 },
                { "G", 1073741824 }, { "GiB", 1073741824 },
                { "GB", 1e9 } };
  char *end;
  double number = strtod (value, &end);
  if (end != value && number >= 0 && isfinite (number)
      && !isspace ((unsigned char) *value))
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
      if (strcmp (end, units[i].suffix) == 0)
        return number * units[i].factor;
  command_usage_error ("check",
                       "%s: '%s' is not a size (a number of bytes, or with "
                       "K, M, G, KiB, MiB, GiB, KB, MB or GB)",
                       option, value);
}

/* One limit and what the profile gave.  */
struct outcome
{
  const char *option; /* "--max-bytes" */
  const char *what;   /* "bytes allocated" */
  bool bytes;         /* a size: shown with units */
  double limit, value;
  double baseline; /* growth: the baseline's figure; else -1 */
  double growth;   /* growth: --max-growth, a fraction */
  bool broken;
  char *blame; /* the context most to blame, or NULL */
  double blame_value, blame_baseline;
};

struct gate
{
  struct session sides[2]; /* the profiles checked, the baseline */
  struct session binaries;
  bool has_baseline, json;
  struct outcome outcomes[16];
  size_t outcome_count;
  struct view_frame *frames;
  size_t frame_capacity;
};

/* "leaf (file:line:column) <- caller (...) <- ...", at most four frames,
   of CONTEXT.  */
static char *
context_text (struct gate *gate, struct session *session,
              const struct profile_context *context)
{
  size_t n = session_frames (session, context, false, &gate->frames,
                             &gate->frame_capacity);
  struct buffer text = { 0 };
  char frame[1024];
  for (size_t i = 0; i < n && i < 4; i++)
    buffer_printf (&text, "%s%s", i ? " <- " : "",
                   session_frame_text (&gate->frames[i], frame, sizeof frame));
  if (n > 4)
    buffer_printf (&text, " <- ...");
  if (n == 0)
    buffer_printf (&text, "[no frames]");
  return text.data;
}

static struct outcome *
add_outcome (struct gate *gate, const char *option, enum check_metric metric,
             double limit, double value)
{
  struct outcome *outcome = &gate->outcomes[gate->outcome_count++];
  memset (outcome, 0, sizeof *outcome);
  outcome->option = option;
  outcome->what = metric_names[metric];
  outcome->bytes = metric != CHECK_ALLOCS;
  outcome->limit = limit;
  outcome->value = value;
  outcome->baseline = -1;
  outcome->broken = value > limit;
  return outcome;
}

/* A limit on a total: when broken, blame the largest context.  */
static void
check_total (struct gate *gate, const char *option, enum check_metric metric,
             double limit)
{
  struct profile *profile = &gate->sides[0].profile;
  struct outcome *outcome = add_outcome (gate, option, metric, limit,
                                         metric_total (profile, metric));
  if (!outcome->broken)
    return;
  size_t largest = 0;
  for (size_t c = 1; c < profile->context_count; c++)
    if (metric_of (&profile->contexts[c], metric)
        > metric_of (&profile->contexts[largest], metric))
      largest = c;
  outcome->blame
      = context_text (gate, &gate->sides[0], &profile->contexts[largest]);
  outcome->blame_value = metric_of (&profile->contexts[largest], metric);
}

/* Every context's bytes under LIMIT: the outcome names the largest.  */
static void
check_each_context (struct gate *gate, double limit)
{
  struct profile *profile = &gate->sides[0].profile;
  size_t largest = 0;
  for (size_t c = 1; c < profile->context_count; c++)
    if (profile->contexts[c].mib.total_size
        > profile->contexts[largest].mib.total_size)
      largest = c;
  double value = profile->context_count
                     ? (double) profile->contexts[largest].mib.total_size
                     : 0;
  struct outcome *outcome
      = add_outcome (gate, "--max-context-bytes", CHECK_BYTES, limit, value);
  outcome->what = "bytes allocated by one context";
  if (outcome->broken)
    {
      outcome->blame
          = context_text (gate, &gate->sides[0], &profile->contexts[largest]);
      outcome->blame_value = value;
    }
}

/* Growth of METRIC from the baseline within GROWTH (a fraction): when
   broken, blame the context that grew the most.  */
static void
check_growth (struct gate *gate, enum check_metric metric, double growth)
{
  struct profile *now = &gate->sides[0].profile;
  struct profile *before = &gate->sides[1].profile;
  double old_total = metric_total (before, metric);
  double new_total = metric_total (now, metric);
  struct outcome *outcome = add_outcome (gate, "--max-growth", metric,
                                         old_total * (1 + growth), new_total);
  outcome->baseline = old_total;
  outcome->growth = growth;
  if (!outcome->broken)
    return;

  /* The baseline's contexts by key, then each current context's change. */
  size_t count = before->context_count;
  char **keys = xcalloc (count + 1, sizeof *keys);
  for (size_t c = 0; c < count; c++)
    keys[c] = session_context_key (&gate->sides[1], &before->contexts[c],
                                   &gate->frames, &gate->frame_capacity);
  double best = -INFINITY;
  size_t best_context = 0;
  double best_old = 0;
  for (size_t c = 0; c < now->context_count; c++)
    {
      char *key = session_context_key (&gate->sides[0], &now->contexts[c],
                                       &gate->frames, &gate->frame_capacity);
      double old_value = 0;
      for (size_t b = 0; b < count; b++)
        if (strcmp (keys[b], key) == 0)
          old_value += metric_of (&before->contexts[b], metric);
      free (key);
      double change = metric_of (&now->contexts[c], metric) - old_value;
      if (change > best)
        {
          best = change;
          best_context = c;
          best_old = old_value;
        }
    }
  for (size_t c = 0; c < count; c++)
    free (keys[c]);
  free (keys);
  if (now->context_count > 0)
    {
      outcome->blame
          = context_text (gate, &gate->sides[0], &now->contexts[best_context]);
      outcome->blame_value = metric_of (&now->contexts[best_context], metric);
      outcome->blame_baseline = best_old;
    }
}

static const char *
figure (const struct outcome *outcome, double value, char *out, size_t size)
{
  if (outcome->bytes)
    {
      char human[32];
      format_bytes (value, human, sizeof human);
      if (value < 1024)
        snprintf (out, size, "%s", human);
      else
        snprintf (out, size, "%s (%.0f B)", human, value);
    }
  else
    snprintf (out, size, "%.0f", value);
  return out;
}

static void
print_text (const struct gate *gate)
{
  for (size_t i = 0; i < gate->outcome_count; i++)
    {
      const struct outcome *o = &gate->outcomes[i];
      char value[64], limit[64], old[64];
      figure (o, o->value, value, sizeof value);
      figure (o, o->limit, limit, sizeof limit);
      if (o->baseline >= 0)
        {
          figure (o, o->baseline, old, sizeof old);
          printf ("%s: %s went from %s to %s", o->broken ? "FAIL" : "ok",
                  o->what, old, value);
          if (o->baseline > 0)
            printf (" (%+.1f%%)", 100 * (o->value / o->baseline - 1));
          printf (", %s %s=%g%% (at most %s)\n", o->broken ? "over" : "within",
                  o->option, 100 * o->growth, limit);
        }
      else
        printf ("%s: %s %s, %s %s=%s\n", o->broken ? "FAIL" : "ok", o->what,
                value, o->broken ? "over" : "within", o->option, limit);
      if (o->blame != NULL)
        {
          figure (o, o->blame_value, value, sizeof value);
          if (o->baseline >= 0)
            {
              figure (o, o->blame_baseline, old, sizeof old);
              printf ("  the context that grew most, from %s to %s: %s\n", old,
                      value, o->blame);
            }
          else
            printf ("  the largest context, %s: %s\n", value, o->blame);
        }
    }
}

static void
print_json (const struct gate *gate, bool passed)
{
  printf ("{\"passed\": %s, \"checks\": [", passed ? "true" : "false");
  for (size_t i = 0; i < gate->outcome_count; i++)
    {
      const struct outcome *o = &gate->outcomes[i];
      printf ("%s\n  {\"option\": \"%s\", \"what\": \"%s\", \"limit\": %.0f, "
              "\"value\": %.0f, ",
              i ? "," : "", o->option, o->what, o->limit, o->value);
      if (o->baseline >= 0)
        printf ("\"baseline\": %.0f, \"max_growth_percent\": %g, ", o->baseline,
                100 * o->growth);
      printf ("\"passed\": %s, \"context\": ", o->broken ? "false" : "true");
      if (o->blame != NULL)
        {
          printf ("{\"value\": %.0f, ", o->blame_value);
          if (o->baseline >= 0)
            printf ("\"baseline\": %.0f, ", o->blame_baseline);
          printf ("\"frames\": ");
          emit_json_string (stdout, o->blame);
          printf ("}");
        }
      else
        printf ("null");
      printf ("}");
    }
  printf ("\n]}\n");
}

/* Split "a,b,c" (modified in place) into paths.  */
static char **
split_list (char *list, int *count)
{
  char **paths = xcalloc (strlen (list) + 2, sizeof *paths);
  *count = 0;
  for (char *p = strtok (list, ","); p != NULL; p = strtok (NULL, ","))
    paths[(*count)++] = p;
  return paths;
}

int
cmd_check (int argc, char **argv)
{
  if (command_help_requested (argc, argv))
    {
      fputs (usage, stdout);
      return 0;
    }
  struct gate gate;
  memset (&gate, 0, sizeof gate);
  session_init (&gate.sides[0]);
  session_init (&gate.sides[1]);
  session_init (&gate.binaries);
  double max_bytes = -1, max_allocs = -1, max_live = -1, max_context = -1;
  double max_growth = -1;
  char *baseline = NULL;
  char **inputs = xcalloc ((size_t) argc, sizeof *inputs);
  int input_count = 0;
  for (int i = 1; i < argc; i++)
    {
      char *arg = argv[i];
      if (session_option (&gate.binaries, argc, argv, &i))
        continue;
      if (strncmp (arg, "--max-bytes=", 12) == 0)
        max_bytes = parse_size ("--max-bytes", arg + 12);
      else if (strncmp (arg, "--max-allocs=", 13) == 0)
        max_allocs = (double) command_count ("check", "--max-allocs", arg + 13);
      else if (strncmp (arg, "--max-live-at-exit=", 19) == 0)
        max_live = parse_size ("--max-live-at-exit", arg + 19);
      else if (strncmp (arg, "--max-context-bytes=", 20) == 0)
        max_context = parse_size ("--max-context-bytes", arg + 20);
      else if (strncmp (arg, "--baseline=", 11) == 0 && arg[11] != '\0')
        baseline = arg + 11;
      else if (strncmp (arg, "--max-growth=", 13) == 0)
        {
          char *value = xstrdup (arg + 13);
          size_t length = strlen (value);
          if (length > 0 && value[length - 1] == '%')
            value[length - 1] = '\0';
          max_growth
              = command_number ("check", "--max-growth", value, 0, 1e9) / 100;
          free (value);
        }
      else if (strncmp (arg, "--format=", 9) == 0)
        gate.json
            = command_choice ("check", "format", arg + 9, command_text_or_json)
              == 1;
      else if (strcmp (arg, "--") == 0)
        while (++i < argc)
          inputs[input_count++] = argv[i];
      else if (arg[0] == '-' && arg[1] != '\0')
        command_usage_error ("check", "unknown option '%s'", arg);
      else
        inputs[input_count++] = arg;
    }
  if (input_count == 0)
    command_usage_error ("check", "no profile given");
  if (max_growth >= 0 && baseline == NULL)
    command_usage_error ("check", "--max-growth needs --baseline=OLD");
  if (max_bytes < 0 && max_allocs < 0 && max_live < 0 && max_context < 0
      && baseline == NULL)
    command_usage_error ("check", "no limit given (--max-bytes, --max-allocs, "
                                  "--max-live-at-exit, --max-context-bytes or "
                                  "--baseline)");
  if (baseline != NULL && max_growth < 0)
    max_growth = 0.10;

  session_load (&gate.sides[0], inputs, input_count, false);
  if (baseline != NULL)
    {
      int count;
      char *list = xstrdup (baseline);
      char **paths = split_list (list, &count);
      if (count == 0)
        command_usage_error ("check", "--baseline: an empty list of profiles");
      session_load (&gate.sides[1], paths, count, false);
      free (paths);
      free (list);
    }
  session_symbolize_sides (gate.sides, baseline != NULL ? 2 : 1,
                           &gate.binaries);

  struct profile *profile = &gate.sides[0].profile;
  bool has_live = profile->context_count == 0 || profile->inputs_with_extra > 0;
  if (max_live >= 0 && !has_live)
    die (EXIT_BAD_INPUT,
         "check: --max-live-at-exit: no profile had its side file "
         "(memprof.extra.PID for memprof.profraw.PID, written by GCC "
         "MemProf's runtime next to the profile), which holds the bytes "
         "live at exit");
  if (max_bytes >= 0)
    check_total (&gate, "--max-bytes", CHECK_BYTES, max_bytes);
  if (max_allocs >= 0)
    check_total (&gate, "--max-allocs", CHECK_ALLOCS, max_allocs);
  if (max_live >= 0)
    check_total (&gate, "--max-live-at-exit", CHECK_LIVE, max_live);
  if (max_context >= 0)
    check_each_context (&gate, max_context);
  if (baseline != NULL)
    {
      check_growth (&gate, CHECK_BYTES, max_growth);
      check_growth (&gate, CHECK_ALLOCS, max_growth);
      /* Live bytes only when both sides can tell them.  */
      if (profile->inputs_with_extra > 0
          && gate.sides[1].profile.inputs_with_extra > 0)
        check_growth (&gate, CHECK_LIVE, max_growth);
    }

  bool passed = true;
  for (size_t i = 0; i < gate.outcome_count; i++)
    passed &= !gate.outcomes[i].broken;
  if (gate.json)
    print_json (&gate, passed);
  else
    {
      print_text (&gate);
      printf ("memprof check: %s\n",
              passed ? "every limit holds" : "a limit is broken");
    }

  for (size_t i = 0; i < gate.outcome_count; i++)
    free (gate.outcomes[i].blame);
  free (gate.frames);
  free (inputs);
  session_free (&gate.sides[0]);
  session_free (&gate.sides[1]);
  session_free (&gate.binaries);
  return passed ? 0 : EXIT_LIMIT_BROKEN;
}
