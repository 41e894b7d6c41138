/* memprof report: one self-contained HTML page for a person deciding where
   memory is wasted: a header with what went in, the contexts as a sortable
   table with a detail panel, two distributions drawn as SVG, and the
   findings, worst first.

   The page is report_template.h with two holes: the title, and the data
   as one JSON object in a <script type="application/json"> element, which
   the page's own script reads and draws.  Nothing is fetched: no network,
   no other file.  In the JSON, every '<', '>' and '&' inside a string is
   written as \u003c, \u003e, \u0026, so no symbol name can close the
   element ("</script>") or open a comment in it.

   The data's shape (the page's script reads nothing else):
     title, inputs [paths], profiles (merged), profilesWithExtra,
     hasAccesses, histogramGranule, binaries [paths],
     unsymbolizedLocations, hiddenSystemFindings, mibFields [LLVM names], findingKinds [names],
     strings [text],
     locations [[[name, file, line, column, flags], ...]]: each call-stack
       location's frames, innermost first; name and file index strings;
       flags: 1 inlined into the next frame, 2 no debug information,
       4 not symbolized (name is then the address);
     contexts [...], ranked by bytes, each {bytes, allocs, accesses,
       density, lifetime, lifetimeDensity, meanSize, waste (null when the
       data cannot tell), stack [locations, leaf first], mib [values in
       mibFields' order], extra [untouched allocations, touched bytes,
       live allocations, live bytes] or null, histogram [values] or null,
       findings [[kind, bytes, text], ...], siteFrame: the index, in
       the stack's frames, of the first one in the user's code (0 when
       none is; the frames before it are folded), system: allocated by
       the system for itself (its findings are left out unless
       --include-system, and counted in hiddenSystemFindings)}.  */

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "metrics.h"
#include "mibfields.h"
#include "origin.h"
#include "report_template.h"
#include "session.h"
#include "util.h"

static const char usage[]
    = "usage: memprof report --html=FILE [options] PROFILE...\n"
      "\n"
      "Write one self-contained HTML page about the profiles (merged): a\n"
      "summary, every allocation context in a table that sorts and "
      "filters,\n"
      "each context's call stack and MemInfoBlock, the distributions of\n"
      "lifetime and access density, and the findings, worst first.  The "
      "page\n"
      "needs no network and no other file: open it in any browser.\n"
      "\n"
      "  --html=FILE, --html FILE  the page to write (required; \"-\": "
      "stdout);\n"
      "                            written under a temporary name and "
      "renamed\n"
      "                            when complete\n"
      "  --binary=FILE             symbolize with FILE's DWARF (the "
      "profiled\n"
      "                            program; give shared libraries too, each "
      "with\n"
      "                            --binary); without it, frames are "
      "addresses\n"
      "  --no-libraries            do not look for the program's shared "
      "libraries\n"
      "  --include-system          also the findings about what the C/C++ "
      "runtime,\n"
      "                            system libraries and start-up allocate "
      "for\n"
      "                            themselves (hidden by default)\n"
      "  --focus=REGEX, --ignore=REGEX, --suppressions=FILE\n"
      "                            only the contexts with a frame matching "
      "a\n"
      "                            --focus REGEX, none with a frame "
      "matching an\n"
      "                            --ignore REGEX or a line of FILE\n"
      "  --title=TEXT              the page's title (default \"Memory "
      "profile:\n"
      "                            NAME\", NAME the first profile's file "
      "name)\n"
      "\n"
      "Example:\n"
      "  memprof report --binary=./app --html=report.html "
      "memprof.profraw.1234\n";

/* Frame flags in the data (see the opening comment).  */
enum
{
  FRAME_INLINED = 1,
  FRAME_NO_DEBUG_INFO = 2,
  FRAME_UNSYMBOLIZED = 4
};

/* No string id assigned yet.  */
#define UNASSIGNED UINT32_MAX

struct report
{
  struct session session;
  const char *html_path;
  const char *title;
  char **inputs;
  int input_count;
  bool has_accesses;
  size_t hidden_system_findings; /* left out: see origin.h */
  struct view_frame *frames;
  size_t frame_capacity;
  /* Profile string index -> index in the data's strings, and back.  */
  uint32_t *string_ids;
  size_t string_ids_size;
  uint32_t *strings_out;
  size_t strings_out_count;
  /* Profile location index -> index in the data's locations.  */
  uint32_t *location_ids;
  size_t locations_out_count;
  struct buffer locations_json;
};

/* ---- Writing into the page ---- */

/* TEXT as a JSON string that can sit inside a <script> element: besides
   JSON's own escapes, '<', '>' and '&' (so "</script>" and "<!--" cannot
   occur) and U+2028/U+2029 (line breaks to older JavaScript).  */
static void
append_json_string (struct buffer *out, const char *text)
{
  buffer_append (out, "\"", 1);
  for (const unsigned char *p = (const unsigned char *) text; *p; p++)
    switch (*p)
      {
      case '"':
        buffer_append (out, "\\\"", 2);
        break;
      case '\\':
        buffer_append (out, "\\\\", 2);
        break;
      case '\n':
        buffer_append (out, "\\n", 2);
        break;
      case '\t':
        buffer_append (out, "\\t", 2);
        break;
      case '<':
      case '>':
      case '&':
        buffer_printf (out, "\\u%04x", *p);
        break;
      default:
        if (*p < 0x20 || *p == 0x7f)
          buffer_printf (out, "\\u%04x", *p);
        else if (p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9))
          {
            buffer_printf (out, "\\u%04x", p[2] == 0xa8 ? 0x2028 : 0x2029);
            p += 2;
          }
        else
          buffer_append (out, p, 1);
      }
  buffer_append (out, "\"", 1);
}

/* A metric as a JSON number; JSON has no infinities.  */
static void
append_number (struct buffer *out, double value)
{
  if (!isfinite (value))
    value = 0;
  if (value == floor (value) && fabs (value) < 1e15)
    buffer_printf (out, "%.0f", value);
  else
    buffer_printf (out, "%.6g", value);
}

/* ---- The data ---- */

/* The data's index of TEXT, adding it to the strings when new.  */
static uint32_t
string_id (struct report *report, const char *text)
{
  struct profile *profile = &report->session.profile;
  uint32_t index = profile_intern (profile, text);
  if (index >= report->string_ids_size)
    {
      size_t size = profile->string_count + 1024;
      report->string_ids
          = xrealloc (report->string_ids, size * sizeof *report->string_ids);
      for (size_t i = report->string_ids_size; i < size; i++)
        report->string_ids[i] = UNASSIGNED;
      report->strings_out
          = xrealloc (report->strings_out, size * sizeof *report->strings_out);
      report->string_ids_size = size;
    }
  if (report->string_ids[index] == UNASSIGNED)
    {
      report->string_ids[index] = (uint32_t) report->strings_out_count;
      report->strings_out[report->strings_out_count++] = index;
    }
  return report->string_ids[index];
}

/* The data's index of the location LOCATION, whose frames are the COUNT
   at FRAMES, adding it to the locations when new.  */
static uint32_t
location_id (struct report *report, uint32_t location,
             const struct view_frame *frames, size_t count)
{
  if (report->location_ids[location] != UNASSIGNED)
    return report->location_ids[location];
  struct buffer *out = &report->locations_json;
  buffer_printf (out, "%s\n[", report->locations_out_count ? "," : "");
  for (size_t i = 0; i < count; i++)
    {
      const struct view_frame *frame = &frames[i];
      unsigned flags = 0;
      if (frame->inlined)
        flags |= FRAME_INLINED;
      if (!frame->debug_info)
        flags |= FRAME_NO_DEBUG_INFO;
      if (frame->function == NULL)
        flags |= FRAME_UNSYMBOLIZED;
      buffer_printf (out, "%s[%" PRIu32 ",%" PRIu32 ",%u,%u,%u]", i ? "," : "",
                     string_id (report, frame->name),
                     string_id (report, frame->file), frame->line,
                     frame->column, flags);
    }
  buffer_printf (out, "]");
  report->location_ids[location] = (uint32_t) report->locations_out_count;
  return (uint32_t) report->locations_out_count++;
}

static void
append_context (struct report *report, struct buffer *out,
                const struct profile_context *context)
{
  struct profile *profile = &report->session.profile;
  struct metrics m;
  metrics_of (context, report->has_accesses, &m);
  buffer_printf (out, "{\"bytes\":");
  append_number (out, m.bytes);
  buffer_printf (out, ",\"allocs\":");
  append_number (out, m.allocs);
  buffer_printf (out, ",\"accesses\":");
  append_number (out, m.accesses);
  buffer_printf (out, ",\"density\":");
  append_number (out, m.density);
  buffer_printf (out, ",\"lifetime\":");
  append_number (out, m.lifetime_ms);
  buffer_printf (out, ",\"lifetimeDensity\":");
  append_number (out, m.lifetime_density);
  buffer_printf (out, ",\"meanSize\":");
  append_number (out, m.mean_size);
  buffer_printf (out, ",\"peakBytes\":");
  append_number (out, m.peak_bytes);
  buffer_printf (out, ",\"waste\":");
  if (m.waste_known)
    append_number (out, m.waste);
  else
    buffer_printf (out, "null");

  /* The stack: each location's frames come from session_frames in
     order, one per frame of the location (one when unsymbolized).  */
  size_t count = session_frames (&report->session, context, false,
                                 &report->frames, &report->frame_capacity);
  const uint32_t *locations = profile_context_locations (profile, context);
  size_t used = 0;
  buffer_printf (out, ",\n \"stack\":[");
  for (uint32_t i = 0; i < context->location_count; i++)
    {
      uint32_t frames = profile->locations[locations[i]].frame_count;
      size_t n = frames ? frames : 1;
      if (used + n > count)
        break;
      buffer_printf (
          out, "%s%" PRIu32, i ? "," : "",
          location_id (report, locations[i], report->frames + used, n));
      used += n;
    }

  buffer_printf (out, "],\n \"mib\":[");
  for (size_t f = 0; f < mib_field_count; f++)
    buffer_printf (out, "%s%" PRIu64, f ? "," : "",
                   mib_field_value (&context->mib, f));
  buffer_printf (out, "],\"extra\":");
  if (context->has_extra)
    buffer_printf (out, "[%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]",
                   context->extra.untouched_allocations,
                   context->extra.touched_bytes,
                   context->extra.live_allocations, context->extra.live_bytes);
  else
    buffer_printf (out, "null");
  buffer_printf (out, ",\"histogram\":");
  if (context->histogram != NULL && context->mib.access_histogram_size > 0)
    {
      for (uint32_t h = 0; h < context->mib.access_histogram_size; h++)
        buffer_printf (out, "%s%" PRIu64, h ? "," : "[", context->histogram[h]);
      buffer_printf (out, "]");
    }
  else
    buffer_printf (out, "null");

  bool system = context->origin & CONTEXT_FROM_SYSTEM;
  buffer_printf (out, ",\n \"siteFrame\":%zu,\"system\":%s",
                 session_site (report->frames, count),
                 system ? "true" : "false");
  struct finding findings[FINDING_COUNT];
  int found = findings_shown_of (
      context, report->has_accesses, report->session.include_system,
      &finding_defaults, findings, &report->hidden_system_findings);
  buffer_printf (out, ",\n \"findings\":[");
  for (int i = 0; i < found; i++)
    {
      buffer_printf (out, "%s[%d,", i ? "," : "", (int) findings[i].kind);
      append_number (out, findings[i].bytes);
      buffer_printf (out, ",");
      append_json_string (out, findings[i].text);
      buffer_printf (out, "]");
    }
  buffer_printf (out, "]}");
}

/* Locations of the profile no --binary symbolized.  */
static size_t
unsymbolized_locations (const struct report *report)
{
  const struct profile *profile = &report->session.profile;
  size_t count = 0;
  for (size_t i = 0; i < profile->location_count; i++)
    count += report->location_ids[i] != UNASSIGNED
             && profile->locations[i].frame_count == 0
             && profile->locations[i].address != MEMPROF_RAW_FOLD_PC;
  return count;
}

/* The heap's peak and its timeline: null, or {bytes, blocks, timeUs,
   durationUs, snapshotBytes, sampled, runs, samples: [[time us, live
   bytes, [context rank, bytes, ...]], ...]}; RANKS maps contexts to their
   rank (1 = contexts[0] of the page).  */
static void
append_peak (const struct profile *profile, const uint32_t *ranks,
             struct buffer *out)
{
  const struct profile_peak *peak = &profile->peak;
  if (peak->runs == 0)
    {
      buffer_printf (out, "null");
      return;
    }
  buffer_printf (
      out,
      "{\"bytes\":%" PRIu64 ",\"blocks\":%" PRIu64 ",\"timeUs\":%" PRIu64
      ",\"durationUs\":%" PRIu64 ",\"snapshotBytes\":%" PRIu64
      ",\"sampled\":%s,\"runs\":%" PRIu64 ",\n\"samples\":[",
      peak->bytes, peak->blocks, peak->time_us, peak->duration_us,
      peak->snapshot_bytes, peak->sampled ? "true" : "false", peak->runs);
  for (size_t i = 0; i < peak->sample_count; i++)
    {
      const struct profile_peak_sample *sample = &peak->samples[i];
      buffer_printf (out, "%s[%" PRIu64 ",%" PRIu64 ",[", i ? ",\n" : "",
                     sample->time_us, sample->live_bytes);
      int shown = 0;
      for (int k = 0; k < PROFILE_PEAK_TOP; k++)
        if (sample->top_context[k] != PROFILE_PEAK_NO_CONTEXT)
          buffer_printf (out, "%s%" PRIu32 ",%" PRIu64, shown++ ? "," : "",
                         ranks[sample->top_context[k]], sample->top_bytes[k]);
      buffer_printf (out, "]]");
    }
  buffer_printf (out, "]}");
}

static void
append_data (struct report *report, struct buffer *out)
{
  struct profile *profile = &report->session.profile;
  struct buffer contexts = { 0 };
  report->location_ids
      = xmalloc (profile->location_count * sizeof *report->location_ids + 1);
  for (size_t i = 0; i < profile->location_count; i++)
    report->location_ids[i] = UNASSIGNED;

  uint32_t *order = metrics_rank (profile, SORT_BYTES);
  uint32_t *ranks = xmalloc (profile->context_count * sizeof *ranks + 1);
  for (size_t rank = 0; rank < profile->context_count; rank++)
    {
      buffer_printf (&contexts, "%s\n", rank ? "," : "");
      append_context (report, &contexts, &profile->contexts[order[rank]]);
      ranks[order[rank]] = (uint32_t) rank + 1;
    }
  free (order);

  buffer_printf (out, "{\"title\":");
  append_json_string (out, report->title);
  buffer_printf (out, ",\n\"inputs\":[");
  for (int i = 0; i < report->input_count; i++)
    {
      buffer_printf (out, "%s", i ? "," : "");
      append_json_string (out, report->inputs[i]);
    }
  buffer_printf (out, "],\n\"binaries\":[");
  for (size_t i = 0; i < report->session.binary_count; i++)
    {
      buffer_printf (out, "%s", i ? "," : "");
      append_json_string (out, report->session.binaries[i]);
    }
  buffer_printf (out,
                 "],\n\"profiles\":%" PRIu64 ",\"profilesWithExtra\":%" PRIu64
                 ",\"hasAccesses\":%s,\"histogramGranule\":%" PRIu32
                 ",\"unsymbolizedLocations\":%zu,\"hiddenSystemFindings\":%zu"
                 ",\n\"mibFields\":[",
                 profile->inputs, profile->inputs_with_extra,
                 report->has_accesses ? "true" : "false",
                 profile->histogram_granule, unsymbolized_locations (report),
                 report->hidden_system_findings);
  for (size_t f = 0; f < mib_field_count; f++)
    {
      buffer_printf (out, "%s", f ? "," : "");
      append_json_string (out, mib_field_name (f));
    }
  buffer_printf (out, "],\n\"findingKinds\":[");
  for (int k = 0; k < FINDING_COUNT; k++)
    {
      buffer_printf (out, "%s", k ? "," : "");
      append_json_string (out, finding_kind_name ((enum finding_kind) k));
    }
  buffer_printf (out, "],\n\"strings\":[");
  for (size_t i = 0; i < report->strings_out_count; i++)
    {
      buffer_printf (out, "%s", i ? "," : "");
      append_json_string (out,
                          profile_string (profile, report->strings_out[i]));
    }
  buffer_printf (out, "],\n\"locations\":[");
  if (report->locations_json.length)
    buffer_append (out, report->locations_json.data,
                   report->locations_json.length);
  buffer_printf (out, "],\n\"peak\":");
  append_peak (profile, ranks, out);
  buffer_printf (out, ",\n\"contexts\":[");
  if (contexts.length)
    buffer_append (out, contexts.data, contexts.length);
  buffer_printf (out, "]}");
  buffer_free (&contexts);
  free (ranks);
}

/* The template with its holes filled: @TITLE@ (HTML text) and @DATA@.  */
static void
build_page (struct report *report, struct buffer *page)
{
  const char *template = report_template;
  for (;;)
    {
      const char *hole = strchr (template, '@');
      if (hole == NULL)
        {
          buffer_append (page, template, strlen (template));
          return;
        }
      buffer_append (page, template, (size_t) (hole - template));
      if (strncmp (hole, "@TITLE@", 7) == 0)
        {
          buffer_append_markup (page, report->title);
          template = hole + 7;
        }
      else if (strncmp (hole, "@DATA@", 6) == 0)
        {
          append_data (report, page);
          template = hole + 6;
        }
      else
        {
          buffer_append (page, "@", 1);
          template = hole + 1;
        }
    }
}

/* "Memory profile: NAME" of the first input (and how many more).  */
static char *
default_title (char **inputs, int count)
{
  const char *base = strrchr (inputs[0], '/');
  base = base && base[1] ? base + 1 : inputs[0];
  if (count == 1)
    return xasprintf ("Memory profile: %s", base);
  return xasprintf ("Memory profile: %s and %d more", base, count - 1);
}

int
cmd_report (int argc, char **argv)
{
  struct report report;
  memset (&report, 0, sizeof report);
  if (command_help_requested (argc, argv))
    {
      fputs (usage, stdout);
      return 0;
    }
  session_init (&report.session);
  report.inputs = xcalloc ((size_t) argc, sizeof *report.inputs);
  for (int i = 1; i < argc; i++)
    {
      const char *arg = argv[i];
      if (session_option (&report.session, argc, argv, &i))
        continue;
      if (strncmp (arg, "--html=", 7) == 0)
        report.html_path = arg + 7;
      else if (strcmp (arg, "--html") == 0)
        {
          if (i + 1 >= argc)
            command_usage_error ("report", "--html needs a file name");
          report.html_path = argv[++i];
        }
      else if (strncmp (arg, "--title=", 8) == 0)
        report.title = arg + 8;
      else if (strcmp (arg, "--title") == 0)
        {
          if (i + 1 >= argc)
            command_usage_error ("report", "--title needs a text");
          report.title = argv[++i];
        }
      else if (strcmp (arg, "--") == 0)
        {
          while (++i < argc)
            report.inputs[report.input_count++] = argv[i];
        }
      else if (arg[0] == '-' && arg[1] != '\0')
        command_usage_error ("report", "unknown option '%s'", arg);
      else
        report.inputs[report.input_count++] = argv[i];
    }
  if (report.html_path == NULL)
    command_usage_error ("report", "no --html=FILE given (the page to "
                                   "write; - for stdout)");
  if (report.html_path[0] == '\0')
    command_usage_error ("report", "--html needs a file name");
  if (report.input_count == 0)
    command_usage_error ("report", "no profile given");

  session_load (&report.session, report.inputs, report.input_count, true);
  session_symbolize (&report.session);
  report.has_accesses = metrics_profile_has_accesses (&report.session.profile);
  char *title = NULL;
  if (report.title == NULL)
    report.title = title = default_title (report.inputs, report.input_count);

  struct buffer page = { 0 };
  build_page (&report, &page);
  char error[1024];
  int status = 0;
  if (write_file_atomically (report.html_path, page.data, page.length, error,
                             sizeof error)
      != 0)
    {
      warn ("report: %s", error);
      status = 1;
    }

  buffer_free (&page);
  buffer_free (&report.locations_json);
  free (title);
  free (report.location_ids);
  free (report.string_ids);
  free (report.strings_out);
  free (report.frames);
  free (report.inputs);
  session_free (&report.session);
  return status;
}
