/* memprof findings: the waste in a profile, worst first: allocations never
   touched, over-reserved, short-lived in bulk, leaked; and the contexts
   that make the heap's peak.  */

#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "emit.h"
#include "metrics.h"
#include "origin.h"
#include "session.h"
#include "util.h"

static const char usage[]
    = "usage: memprof findings [options] PROFILE...\n"
      "\n"
      "What a person should look at, worst first (by the bytes each "
      "costs):\n"
      "  never-touched  allocations no instrumented access ever reached\n"
      "  over-reserved  touched allocations most of whose bytes were not\n"
      "  short-lived    many small allocations, each freed within a "
      "millisecond\n"
      "  leaked         allocations still live at exit\n"
      "  at-peak        contexts holding a large share of the heap at its "
      "peak\n"
      "                 (not waste: only when asked, with --kind)\n"
      "docs/analysis.md says what each needs from the profile.\n"
      "\n"
      "  --binary=FILE             symbolize with FILE's DWARF\n"
      "  --no-libraries            do not look for the program's shared "
      "libraries\n"
      "  --include-system          also what the C/C++ runtime, system "
      "libraries\n"
      "                            and start-up allocate for themselves "
      "(hidden)\n"
      "  --focus=REGEX             only contexts with a frame matching "
      "REGEX\n"
      "  --ignore=REGEX            no context with a frame matching REGEX\n"
      "  --suppressions=FILE       no context with a frame matching a line "
      "of FILE\n"
      "  --kind=KIND[,KIND...]     only these kinds\n"
      "  --top=N                   the first N findings (default all)\n"
      "  --format=text|json        (default text)\n"
      "  --over-reserved=FRACTION  untouched share of a context's bytes that "
      "makes\n"
      "                            it over-reserved (default 0.5)\n"
      "  --min-waste=BYTES         untouched bytes below which it is not "
      "reported\n"
      "                            (default 4096)\n"
      "  --short-lived-allocs=N    allocations a context needs to be "
      "short-lived\n"
      "                            in bulk (default 1000)\n"
      "  --short-lived-size=BYTES  their largest mean size (default 256)\n"
      "  --short-lived-ms=MS       their longest mean lifetime (default 1)\n"
      "  --at-peak=FRACTION        share of the heap's peak that makes a "
      "context\n"
      "                            an at-peak finding (default 0.1)\n"
      "\n"
      "Example:\n"
      "  memprof findings --binary=./app --kind=over-reserved "
      "memprof.profraw.1234\n";

struct found
{
  struct finding finding;
  uint32_t context;
};

static int
compare_found (const void *a, const void *b)
{
  const struct found *x = a, *y = b;
  if (x->finding.bytes != y->finding.bytes)
    return x->finding.bytes > y->finding.bytes ? -1 : 1;
  if (x->context != y->context)
    return x->context < y->context ? -1 : 1;
  return (int) x->finding.kind - (int) y->finding.kind;
}

int
cmd_findings (int argc, char **argv)
{
  if (command_help_requested (argc, argv))
    {
      fputs (usage, stdout);
      return 0;
    }
  struct session session;
  struct finding_thresholds thresholds = finding_defaults;
  bool wanted[FINDING_COUNT];
  bool json = false;
  long top = 0;
  session_init (&session);
  for (int k = 0; k < FINDING_COUNT; k++)
    wanted[k] = k != FINDING_AT_PEAK;
  char **inputs = xcalloc ((size_t) argc, sizeof *inputs);
  int input_count = 0;
  for (int i = 1; i < argc; i++)
    {
      const char *arg = argv[i];
      if (session_option (&session, argc, argv, &i))
        continue;
      if (strncmp (arg, "--kind=", 7) == 0)
        {
          char *kinds = xstrdup (arg + 7), *save = NULL;
          for (int k = 0; k < FINDING_COUNT; k++)
            wanted[k] = false;
          for (char *kind = strtok_r (kinds, ",", &save); kind != NULL;
               kind = strtok_r (NULL, ",", &save))
            {
              int k = 0;
              while (k < FINDING_COUNT
                     && strcmp (kind, finding_kind_name (k)) != 0)
                k++;
              if (k == FINDING_COUNT)
                command_usage_error ("findings",
                                     "unknown kind '%s' (never-"
                                     "touched, over-reserved, short-lived, "
                                     "leaked, at-peak)",
                                     kind);
              wanted[k] = true;
            }
          free (kinds);
        }
      else if (strncmp (arg, "--top=", 6) == 0)
        top = command_count ("findings", "--top", arg + 6);
      else if (strncmp (arg, "--format=", 9) == 0)
        json = command_choice ("findings", "format", arg + 9,
                               command_text_or_json)
               == 1;
      else if (strncmp (arg, "--over-reserved=", 16) == 0)
        thresholds.over_reserved_fraction
            = command_number ("findings", "--over-reserved", arg + 16, 0, 1e18);
      else if (strncmp (arg, "--min-waste=", 12) == 0)
        thresholds.over_reserved_min_bytes
            = command_number ("findings", "--min-waste", arg + 12, 0, 1e18);
      else if (strncmp (arg, "--short-lived-allocs=", 21) == 0)
        thresholds.short_lived_min_allocs = command_number (
            "findings", "--short-lived-allocs", arg + 21, 0, 1e18);
      else if (strncmp (arg, "--short-lived-size=", 19) == 0)
        thresholds.short_lived_max_size = command_number (
            "findings", "--short-lived-size", arg + 19, 0, 1e18);
      else if (strncmp (arg, "--short-lived-ms=", 17) == 0)
        thresholds.short_lived_max_ms = command_number (
            "findings", "--short-lived-ms", arg + 17, 0, 1e18);
      else if (strncmp (arg, "--at-peak=", 10) == 0)
        thresholds.at_peak_min_fraction
            = command_number ("findings", "--at-peak", arg + 10, 0, 1);
      else if (arg[0] == '-' && arg[1] != '\0')
        command_usage_error ("findings", "unknown option '%s'", arg);
      else
        inputs[input_count++] = argv[i];
    }
  if (input_count == 0)
    command_usage_error ("findings", "no profile given");
  session_load (&session, inputs, input_count, false);
  session_symbolize (&session);
  struct profile *profile = &session.profile;
  bool has_accesses = metrics_profile_has_accesses (profile);

  size_t count = 0, hidden = 0;
  struct found *all
      = xmalloc (profile->context_count * FINDING_COUNT * sizeof *all + 1);
  for (size_t c = 0; c < profile->context_count; c++)
    {
      struct finding found[FINDING_COUNT];
      size_t hidden_here = 0;
      int n = findings_shown_of (&profile->contexts[c], has_accesses,
                                 session.include_system, &thresholds, found,
                                 &hidden_here);
      if (hidden_here > 0)
        {
          /* Only the kinds asked for count as hidden.  */
          n = findings_of (&profile->contexts[c], has_accesses, &thresholds,
                           found);
          for (int i = 0; i < n; i++)
            hidden += wanted[found[i].kind];
          n = 0;
        }
      else
        n += finding_at_peak (profile, &profile->contexts[c], &thresholds,
                              found + n);
      for (int i = 0; i < n; i++)
        if (wanted[found[i].kind])
          {
            all[count].finding = found[i];
            all[count++].context = (uint32_t) c;
          }
    }
  qsort (all, count, sizeof *all, compare_found);
  size_t shown = top > 0 && (size_t) top < count ? (size_t) top : count;

  struct view_frame *frames = NULL;
  size_t capacity = 0;
  char line[1024], bytes[32];
  if (json)
    printf ("{\n  \"has_accesses\": %s,\n  \"has_side_file\": %s,\n"
            "  \"hidden_system_findings\": %zu,\n"
            "  \"findings\": [",
            has_accesses ? "true" : "false",
            profile->inputs_with_extra > 0 ? "true" : "false", hidden);
  else
    {
      printf ("%zu finding%s in %zu contexts", count, count == 1 ? "" : "s",
              profile->context_count);
      if (shown < count)
        printf (" (the first %zu)", shown);
      printf (".\n");
      if (hidden > 0)
        printf ("%zu finding%s about what the C/C++ runtime, system "
                "libraries or start-up allocate for themselves hidden; "
                "--include-system to show them.\n",
                hidden, hidden == 1 ? "" : "s");
      if (!has_accesses)
        printf ("No access counts (the program was not built with the "
                "plugin): never-touched and over-reserved cannot be told.\n");
      if (profile->inputs_with_extra == 0)
        printf ("No side file (.extra): over-reserved is told from "
                "histograms only, leaks not at all.\n");
    }
  for (size_t i = 0; i < shown; i++)
    {
      const struct profile_context *context
          = &profile->contexts[all[i].context];
      size_t n = session_frames (&session, context, false, &frames, &capacity);
      if (json)
        {
          printf ("%s\n    {\"kind\": \"%s\", \"bytes\": %.0f, \"text\": ",
                  i ? "," : "", finding_kind_name (all[i].finding.kind),
                  all[i].finding.bytes);
          emit_json_string (stdout, all[i].finding.text);
          printf (", \"context_bytes\": %llu, \"frames\": [",
                  (unsigned long long) context->mib.total_size);
          for (size_t f = 0; f < n; f++)
            {
              printf ("%s", f ? ", " : "");
              emit_json_string (
                  stdout, session_frame_text (&frames[f], line, sizeof line));
            }
          /* The first frame in the user's code: the allocation site.  */
          printf ("], \"site\": %zu, \"system\": %s}", session_site (frames, n),
                  context->origin & CONTEXT_FROM_SYSTEM ? "true" : "false");
        }
      else
        {
          printf ("\n%zu. [%s] %s: %s\n", i + 1,
                  finding_kind_name (all[i].finding.kind),
                  format_bytes (all[i].finding.bytes, bytes, sizeof bytes),
                  all[i].finding.text);
          session_print_frames (&session, context, "     ", 8, false);
        }
    }
  if (json)
    printf ("\n  ]\n}\n");
  free (frames);
  free (all);
  free (inputs);
  session_free (&session);
  return 0;
}
