/* memprof show: allocation contexts ranked by a metric, for people (text)
   or programs (JSON, and YAML in the shape of `llvm-profdata show
   --memory`).  */

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "emit.h"
#include "metrics.h"
#include "mibfields.h"
#include "session.h"
#include "origin.h"
#include "show_globals.h"
#include "show_peak.h"
#include "show_summary.h"
#include "util.h"

static const char usage[]
    = "usage: memprof show [options] PROFILE...\n"
      "\n"
      "Allocation contexts of the profiles (merged), ranked.\n"
      "\n"
      "  --binary=FILE     symbolize with FILE's DWARF (the profiled program; "
      "give\n"
      "                    shared libraries too, each with --binary)\n"
      "  --no-libraries    do not look for the program's shared "
      "libraries\n"
      "  --include-system  also the findings about what the C/C++ runtime, "
      "system\n"
      "                    libraries and start-up allocate for themselves\n"
      "  --focus=REGEX     only contexts with a frame matching REGEX (its "
      "function\n"
      "                    or file); --ignore=REGEX: none with one; "
      "--suppressions=\n"
      "                    FILE: none with a frame matching a line of FILE\n"
      "  --sort=KEY        bytes|allocs|accesses|density|lifetime|waste|peak "
      "(default\n"
      "                    bytes; YAML keeps the profile's order unless "
      "given)\n"
      "  --metric=KEY      the same as --sort; peak: by bytes live at the "
      "heap's\n"
      "                    peak, with the peak and its timeline\n"
      "  --top=N           the first N contexts (default 20 for text, all "
      "otherwise;\n"
      "                    0 for all)\n"
      "  --frames=N        frames shown per context in text (default 8; 0 "
      "for all)\n"
      "  --format=FORMAT   text|json|yaml (default text). YAML has the shape "
      "of\n"
      "                    `llvm-profdata show --memory` (Records, "
      "AllocSites,\n"
      "                    CallSites, MemInfoBlock)\n"
      "  --globals         the program's global and static variables "
      "instead, by\n"
      "                    accesses per byte, the never-accessed ones "
      "flagged (text\n"
      "                    or JSON; needs --binary to name them)\n"
      "\n"
      "Example:\n"
      "  memprof show --binary=./app --sort=waste --top=5 "
      "memprof.profraw.1234\n";

enum format
{
  FORMAT_TEXT,
  FORMAT_JSON,
  FORMAT_YAML
};

struct show
{
  struct session session;
  enum sort_key sort;
  bool sorted; /* --sort given */
  long top;    /* -1: default */
  long frames;
  enum format format;
  bool globals; /* --globals */
  bool has_accesses;
  size_t hidden_system_findings;
  bool unknown_waste_shown;
  struct view_frame *frame_buffer;
  size_t frame_capacity;
};

/* ---- Text ---- */

static void
print_text (struct show *show, const uint32_t *order, size_t count)
{
  struct profile *profile = &show->session.profile;
  double total_bytes = 0, total_allocs = 0, total_accesses = 0;
  for (size_t i = 0; i < profile->context_count; i++)
    {
      total_bytes += (double) profile->contexts[i].mib.total_size;
      total_allocs += profile->contexts[i].mib.alloc_count;
      total_accesses += (double) profile->contexts[i].mib.total_access_count;
    }
  char bytes[32], waste[32];
  printf ("%zu contexts in %llu profile%s: %s in %.0f allocations, %.0f "
          "accesses\n",
          profile->context_count, (unsigned long long) profile->inputs,
          profile->inputs == 1 ? "" : "s",
          format_bytes (total_bytes, bytes, sizeof bytes), total_allocs,
          total_accesses);
  if (!show->has_accesses && profile->context_count > 0)
    printf ("No access counts: the program was not built with the plugin "
            "(or made no access to its heap).\n");
  struct show_summary summary;
  show_summary_of (profile, &summary);
  show_summary_print_text (&summary, stdout);
  if (show->sort == SORT_PEAK)
    show_peak_text (stdout, profile);
  printf ("Sorted by %s; the first %zu.\n\n", sort_key_name (show->sort),
          count);
  printf ("%4s %10s %6s %10s %12s %9s %10s %10s\n", "#", "bytes", "%", "allocs",
          "accesses", "acc/byte", "lifetime", "waste");
  for (size_t rank = 0; rank < count; rank++)
    {
      const struct profile_context *context = &profile->contexts[order[rank]];
      struct metrics m;
      struct finding findings[FINDING_COUNT];
      metrics_of (context, show->has_accesses, &m);
      printf ("%4zu %10s %5.1f%% %10.0f %12.0f %9.2f %8.1f ms %10s\n", rank + 1,
              format_bytes (m.bytes, bytes, sizeof bytes),
              total_bytes > 0 ? 100 * m.bytes / total_bytes : 0, m.allocs,
              m.accesses, m.density, m.lifetime_ms,
              m.waste_known ? format_bytes (m.waste, waste, sizeof waste)
                            : "?");
      show->unknown_waste_shown |= !m.waste_known;
      int found = findings_shown_of (
          context, show->has_accesses, show->session.include_system,
          &finding_defaults, findings, &show->hidden_system_findings);
      for (int i = 0; i < found; i++)
        printf ("     ! %s\n", findings[i].text);
      if (show->sort == SORT_PEAK && context->peak_bytes > 0)
        printf ("     at peak: %s in %llu blocks (%.1f%% of the peak)\n",
                format_bytes (m.peak_bytes, bytes, sizeof bytes),
                (unsigned long long) context->peak_blocks,
                profile->peak.bytes
                    ? 100 * m.peak_bytes / (double) profile->peak.bytes
                    : 0);
      session_print_frames (&show->session, context, "       ",
                            (size_t) show->frames, true);
    }
  if (show->unknown_waste_shown)
    printf (
        "\nwaste ?: untouched bytes cannot be told: no access counts, "
        "accesses\ncounted one in N (access_sample_rate), or allocated by "
        "library code the\nplugin did not instrument (docs/analysis.md).\n");
  if (show->hidden_system_findings > 0)
    printf ("%s%zu finding%s about what the C/C++ runtime, system libraries "
            "or start-up\nallocate for themselves hidden; --include-system "
            "to show them.\n",
            show->unknown_waste_shown ? "" : "\n", show->hidden_system_findings,
            show->hidden_system_findings == 1 ? "" : "s");
}

/* ---- JSON ---- */

static void
print_json_frame (const struct view_frame *frame)
{
  printf ("{\"function\": ");
  emit_json_string (stdout, frame->function ? frame->function : "");
  printf (", \"name\": ");
  emit_json_string (stdout, frame->name);
  printf (", \"file\": ");
  emit_json_string (stdout, frame->file);
  printf (", \"line\": %u, \"column\": %u, \"line_offset\": %u, "
          "\"inline\": %s, \"debug_info\": %s, \"guid\": \"%" PRIu64
          "\", \"address\": \"0x%" PRIx64 "\"}",
          frame->line, frame->column, frame->line_offset,
          frame->inlined ? "true" : "false",
          frame->debug_info ? "true" : "false", frame->guid, frame->address);
}

static void
print_json (struct show *show, const uint32_t *order, size_t count)
{
  struct profile *profile = &show->session.profile;
  printf ("{\n  \"inputs\": %llu,\n  \"contexts\": %zu,\n  \"sort\": \"%s\",\n"
          "  \"summary\": ",
          (unsigned long long) profile->inputs, profile->context_count,
          sort_key_name (show->sort));
  struct show_summary summary;
  show_summary_of (profile, &summary);
  show_summary_print_json (&summary, stdout);
  printf (",\n  \"records\": [");
  for (size_t rank = 0; rank < count; rank++)
    {
      const struct profile_context *context = &profile->contexts[order[rank]];
      struct metrics m;
      struct finding findings[FINDING_COUNT];
      metrics_of (context, show->has_accesses, &m);
      printf ("%s\n    {\"rank\": %zu, \"bytes\": %.0f, \"allocs\": %.0f, "
              "\"accesses\": %.0f, \"density\": %.6g, \"lifetime_ms\": %.6g, "
              "\"mean_size\": %.6g, \"lifetime_density\": %.6g, \"waste\": ",
              rank ? "," : "", rank + 1, m.bytes, m.allocs, m.accesses,
              m.density, m.lifetime_ms, m.mean_size, m.lifetime_density);
      if (m.waste_known)
        printf ("%.0f", m.waste);
      else
        printf ("null");
      printf (", \"peak_bytes\": %.0f, \"peak_blocks\": %.0f, \"context\": %u",
              m.peak_bytes, m.peak_blocks, order[rank]);
      printf (",\n     \"mib\": {");
      for (size_t f = 0; f < mib_field_count; f++)
        printf ("%s\"%s\": %" PRIu64, f ? ", " : "", mib_field_name (f),
                mib_field_value (&context->mib, f));
      printf ("},\n     \"histogram\": [");
      if (context->histogram != NULL)
        for (uint32_t h = 0; h < context->mib.access_histogram_size; h++)
          printf ("%s%" PRIu64, h ? ", " : "", context->histogram[h]);
      printf ("],\n     \"extra\": ");
      if (context->has_extra)
        printf (
            "{\"untouched_allocations\": %" PRIu64
            ", \"touched_bytes\": %" PRIu64 ", \"live_allocations\": %" PRIu64
            ", \"live_bytes\": %" PRIu64 "}",
            context->extra.untouched_allocations, context->extra.touched_bytes,
            context->extra.live_allocations, context->extra.live_bytes);
      else
        printf ("null");
      printf (",\n     \"findings\": [");
      int found = findings_shown_of (
          context, show->has_accesses, show->session.include_system,
          &finding_defaults, findings, &show->hidden_system_findings);
      for (int i = 0; i < found; i++)
        {
          printf (
              "%s{\"kind\": \"%s\", \"bytes\": %.0f, \"text\": ", i ? ", " : "",
              finding_kind_name (findings[i].kind), findings[i].bytes);
          emit_json_string (stdout, findings[i].text);
          printf ("}");
        }
      printf ("],\n     \"frames\": [");
      size_t n = session_frames (&show->session, context, false,
                                 &show->frame_buffer, &show->frame_capacity);
      for (size_t i = 0; i < n; i++)
        {
          printf ("%s\n       ", i ? "," : "");
          print_json_frame (&show->frame_buffer[i]);
        }
      /* SITE: the index of the first frame in the user's code.  */
      printf ("],\n     \"site\": %zu, \"system\": %s}",
              session_site (show->frame_buffer, n),
              context->origin & CONTEXT_FROM_SYSTEM ? "true" : "false");
    }
  printf ("\n  ],\n");
  show_peak_json (stdout, profile);
  printf ("\n}\n");
}

/* ---- YAML, in llvm-profdata's shape ---- */

/* A record of the YAML: a function, the contexts allocated in it (or in
   functions inlined into it), the call sites in it.  */
struct record
{
  uint64_t guid;
  uint32_t *alloc_sites; /* contexts */
  size_t alloc_count, alloc_capacity;
  struct call_site *call_sites;
  size_t call_count, call_capacity;
};

/* A call site: one location's frames.  */
struct call_site
{
  struct view_frame *frames;
  size_t count;
  uint64_t key; /* the location's module and address */
};

struct records
{
  struct record *items;
  size_t count, capacity;
};

static struct record *
record_for (struct records *records, uint64_t guid)
{
  for (size_t i = records->count; i-- > 0;)
    if (records->items[i].guid == guid)
      return &records->items[i];
  if (records->count == records->capacity)
    {
      records->capacity = records->capacity ? records->capacity * 2 : 16;
      records->items = xrealloc (records->items,
                                 records->capacity * sizeof *records->items);
    }
  struct record *record = &records->items[records->count++];
  memset (record, 0, sizeof *record);
  record->guid = guid;
  return record;
}

static void
print_yaml_frame (const struct view_frame *frame, const char *indent)
{
  printf ("%s-\n%s  Function: %" PRIu64 "\n%s  SymbolName: ", indent, indent,
          frame->guid, indent);
  /* LLVM prints the canonical name: without a .llvm.N or .part.N.  */
  char *name = xstrdup (frame->function);
  name[profile_canonical_length (name)] = '\0';
  emit_yaml_string (stdout, name);
  free (name);
  printf ("\n%s  LineOffset: %u\n%s  Column: %u\n%s  Inline: %d\n", indent,
          frame->line_offset, indent, frame->column, indent,
          frame->inlined ? 1 : 0);
}

static void
print_yaml (struct show *show, const uint32_t *order, size_t count)
{
  struct profile *profile = &show->session.profile;
  struct records records = { 0 };
  /* The call-site records come after every alloc-site record, in the
     order their functions first appear.  */
  struct records calls = { 0 };
  size_t alloc_functions = 0, mib_count = 0, kept = 0;
  struct view_frame **kept_frames = xcalloc (count, sizeof *kept_frames);
  size_t *kept_counts = xcalloc (count, sizeof *kept_counts);

  for (size_t rank = 0; rank < count; rank++)
    {
      const struct profile_context *context = &profile->contexts[order[rank]];
      struct view_frame *frames = NULL;
      size_t capacity = 0;
      size_t n
          = session_frames (&show->session, context, true, &frames, &capacity);
      kept_frames[rank] = frames;
      kept_counts[rank] = n;
      if (n == 0)
        continue; /* llvm-profdata drops contexts with no frame left */
      kept++;
      /* Call sites: every location's frames, for each function in them,
         but the allocation's own first frame.  */
      for (size_t i = 0; i < n;)
        {
          size_t j = i;
          while (j < n && frames[j].inlined)
            j++;
          size_t end = j < n ? j + 1 : n;
          for (size_t k = i; k < end; k++)
            {
              if (i == 0 && k == 0)
                continue;
              struct record *record = record_for (&calls, frames[k].guid);
              uint64_t key = frames[i].address;
              bool seen = false;
              for (size_t c = 0; c < record->call_count && !seen; c++)
                seen
                    = record->call_sites[c].key == key
                      && record->call_sites[c].count == end - i
                      && record->call_sites[c].frames[0].guid == frames[i].guid;
              if (seen)
                continue;
              if (record->call_count == record->call_capacity)
                {
                  record->call_capacity
                      = record->call_capacity ? record->call_capacity * 2 : 4;
                  record->call_sites = xrealloc (
                      record->call_sites,
                      record->call_capacity * sizeof *record->call_sites);
                }
              struct call_site *site
                  = &record->call_sites[record->call_count++];
              site->frames = frames + i;
              site->count = end - i;
              site->key = key;
            }
          i = end;
        }
      /* The alloc site goes to the leaf function and each function it was
         inlined into, up to the first frame that was not inlined.  */
      for (size_t i = 0; i < n; i++)
        {
          struct record *record = record_for (&records, frames[i].guid);
          if (record->alloc_count == record->alloc_capacity)
            {
              record->alloc_capacity
                  = record->alloc_capacity ? record->alloc_capacity * 2 : 4;
              record->alloc_sites = xrealloc (
                  record->alloc_sites,
                  record->alloc_capacity * sizeof *record->alloc_sites);
            }
          record->alloc_sites[record->alloc_count++] = (uint32_t) rank;
          mib_count++;
          if (!frames[i].inlined)
            break;
        }
    }
  alloc_functions = records.count;
  for (size_t i = 0; i < calls.count; i++)
    {
      struct record *record = record_for (&records, calls.items[i].guid);
      record->call_sites = calls.items[i].call_sites;
      record->call_count = calls.items[i].call_count;
    }

  struct show_summary summary;
  show_summary_of (profile, &summary);
  show_summary_print_yaml (&summary, stdout);
  printf ("MemprofProfile:\n  Summary:\n    Version: 4\n"
          "    NumSegments: %zu\n    NumMibInfo: %zu\n"
          "    NumAllocFunctions: %zu\n    NumStackOffsets: %zu\n",
          profile->module_count, mib_count, alloc_functions, kept);
  printf ("  Segments:\n");
  for (size_t i = 0; i < profile->module_count; i++)
    {
      char hex[2 * MEMPROF_RAW_BUILD_ID_MAX + 1];
      if (profile->modules[i].build_id_size == 0)
        strcpy (hex, "<None>");
      else
        for (uint32_t b = 0; b < profile->modules[i].build_id_size; b++)
          sprintf (hex + 2 * b, "%02x", profile->modules[i].build_id[b]);
      printf ("  -\n    BuildId: %s\n", hex);
    }
  printf ("  Records:\n");
  for (size_t r = 0; r < records.count; r++)
    {
      struct record *record = &records.items[r];
      printf ("  -\n    FunctionGUID: %" PRIu64 "\n", record->guid);
      if (record->alloc_count > 0)
        printf ("    AllocSites:\n");
      for (size_t a = 0; a < record->alloc_count; a++)
        {
          uint32_t rank = record->alloc_sites[a];
          const struct profile_context *context
              = &profile->contexts[order[rank]];
          printf ("    -\n      Callstack:\n");
          for (size_t f = 0; f < kept_counts[rank]; f++)
            print_yaml_frame (&kept_frames[rank][f], "      ");
          printf ("      MemInfoBlock:\n");
          for (size_t f = 0; f < mib_field_count; f++)
            printf ("        %s: %" PRIu64 "\n", mib_field_name (f),
                    mib_field_value (&context->mib, f));
          printf ("        AccessHistogram: 0\n");
          if (context->histogram != NULL
              && context->mib.access_histogram_size > 0)
            {
              printf ("        AccessHistogramValues:");
              for (uint32_t h = 0; h < context->mib.access_histogram_size; h++)
                printf (" %" PRId64, (int64_t) context->histogram[h]);
              printf ("\n");
            }
        }
      if (record->call_count > 0)
        printf ("    CallSites:\n");
      /* As llvm-profdata 19 prints them: each frame of each call site
         as an item of its own.  */
      for (size_t c = 0; c < record->call_count; c++)
        for (size_t f = 0; f < record->call_sites[c].count; f++)
          {
            printf ("    -\n");
            print_yaml_frame (&record->call_sites[c].frames[f], "      ");
          }
    }

  for (size_t r = 0; r < records.count; r++)
    free (records.items[r].alloc_sites);
  for (size_t r = 0; r < calls.count; r++)
    {
      free (calls.items[r].alloc_sites);
      free (calls.items[r].call_sites);
    }
  free (records.items);
  free (calls.items);
  for (size_t rank = 0; rank < count; rank++)
    free (kept_frames[rank]);
  free (kept_frames);
  free (kept_counts);
}

int
cmd_show (int argc, char **argv)
{
  struct show show;
  memset (&show, 0, sizeof show);
  if (command_help_requested (argc, argv))
    {
      fputs (usage, stdout);
      return 0;
    }
  session_init (&show.session);
  show.top = -1;
  show.frames = 8;
  char **inputs = xcalloc ((size_t) argc, sizeof *inputs);
  int input_count = 0;
  for (int i = 1; i < argc; i++)
    {
      const char *arg = argv[i];
      if (session_option (&show.session, argc, argv, &i))
        continue;
      if (strncmp (arg, "--sort=", 7) == 0
          || strncmp (arg, "--metric=", 9) == 0)
        {
          const char *name = strchr (arg, '=') + 1;
          int key = sort_key_parse (name);
          if (key < 0)
            command_usage_error ("show",
                                 "unknown sort key '%s' (the keys are "
                                 "%s)",
                                 name, sort_key_names);
          show.sort = (enum sort_key) key;
          show.sorted = true;
        }
      else if (strncmp (arg, "--top=", 6) == 0)
        show.top = command_count ("show", "--top", arg + 6);
      else if (strncmp (arg, "--frames=", 9) == 0)
        show.frames = command_count ("show", "--frames", arg + 9);
      else if (strcmp (arg, "--globals") == 0)
        show.globals = true;
      else if (strncmp (arg, "--format=", 9) == 0)
        {
          static const char *const formats[] = { "text", "json", "yaml", NULL };
          static const enum format values[]
              = { FORMAT_TEXT, FORMAT_JSON, FORMAT_YAML };
          show.format
              = values[command_choice ("show", "format", arg + 9, formats)];
        }
      else if (strcmp (arg, "--") == 0)
        {
          while (++i < argc)
            inputs[input_count++] = argv[i];
        }
      else if (arg[0] == '-' && arg[1] != '\0')
        command_usage_error ("show", "unknown option '%s'", arg);
      else
        inputs[input_count++] = argv[i];
    }
  if (input_count == 0)
    command_usage_error ("show", "no profile given");
  if (show.globals && show.format == FORMAT_YAML)
    command_usage_error ("show", "--globals is shown as text or JSON, not "
                                 "YAML (llvm-profdata's YAML has no globals)");

  session_load (&show.session, inputs, input_count, false);
  session_symbolize (&show.session);
  struct profile *profile = &show.session.profile;
  if (show.globals)
    {
      long top = show.top >= 0 ? show.top : show.format == FORMAT_TEXT ? 20 : 0;
      show_globals (&show.session, show.format == FORMAT_JSON, top);
      free (inputs);
      session_free (&show.session);
      return 0;
    }
  show.has_accesses = metrics_profile_has_accesses (profile);

  uint32_t *order;
  if (show.format == FORMAT_YAML && !show.sorted)
    {
      order = xmalloc (profile->context_count * sizeof *order + 1);
      for (size_t i = 0; i < profile->context_count; i++)
        order[i] = (uint32_t) i;
    }
  else
    order = metrics_rank (profile, show.sort);
  size_t count = profile->context_count;
  long top = show.top >= 0 ? show.top : show.format == FORMAT_TEXT ? 20 : 0;
  if (top > 0 && (size_t) top < count)
    count = (size_t) top;

  switch (show.format)
    {
    case FORMAT_TEXT:
      print_text (&show, order, count);
      break;
    case FORMAT_JSON:
      print_json (&show, order, count);
      break;
    case FORMAT_YAML:
      print_yaml (&show, order, count);
      break;
    }
  free (order);
  free (inputs);
  free (show.frame_buffer);
  session_free (&show.session);
  return 0;
}
