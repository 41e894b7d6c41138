/* memprof functions: the per-function allocation table, as Erlang's eprof
   and call_memory print it for calls and words: one row per function with
   its allocation calls, its share of the bytes, the bytes and the bytes
   per call.

   A context counts for the function that called the allocator: its leaf
   frame, frame 0 after inlining is expanded, or rather its first frame in
   the user's code (session_site: frames of the C++ library inlined from
   system headers and frames of system libraries are not anyone's
   function to fix) (exclusive, the default); or,
   with --inclusive, for every distinct function of its stack, so that a
   function's row holds what it and its callees allocated and main's row
   holds everything.  */

#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "emit.h"
#include "session.h"
#include "util.h"

static const char usage[]
    = "usage: memprof functions [options] PROFILE...\n"
      "\n"
      "The per-function allocation table of the profiles (merged): one row "
      "per\n"
      "function with its allocation calls (AllocCount), its share of the "
      "bytes,\n"
      "the bytes (TotalSize) and the bytes per call.  A context counts for "
      "the\n"
      "function that called the allocator (its leaf frame, after "
      "inlining), or\n"
      "rather its first frame in the user's code: the C++ library's "
      "frames\n"
      "inlined from system headers and system libraries' frames are "
      "skipped.\n"
      "\n"
      "  --binary=FILE        symbolize with FILE's DWARF (the profiled "
      "program;\n"
      "                       give shared libraries too, each with "
      "--binary)\n"
      "  --no-libraries       do not look for the program's shared "
      "libraries\n"
      "  --inclusive          count a context for every distinct function "
      "of its\n"
      "                       stack (once, even under recursion): totals "
      "through\n"
      "                       callees, main has 100% (default: exclusive)\n"
      "  --skip-unsymbolized  a frame without debug information (an address "
      "in\n"
      "                       a library not given with --binary, a name from "
      "a\n"
      "                       symbol table) is no allocation site: the "
      "first\n"
      "                       frame with debug information is (default: "
      "off,\n"
      "                       such frames are rows of their own)\n"
      "  --sort=KEY           bytes|calls|per-call|name (default bytes)\n"
      "  --top=N              the first N rows (default 20 for text, all "
      "otherwise;\n"
      "                       0 for all)\n"
      "  --format=FORMAT      text|json|csv (default text)\n"
      "\n"
      "Examples:\n"
      "  memprof functions --binary=./app memprof.profraw.1234\n"
      "  memprof functions --binary=./app --inclusive --skip-unsymbolized "
      "--top=10 \\\n"
      "      memprof.profraw.1234\n";

enum format
{
  FORMAT_TEXT,
  FORMAT_JSON,
  FORMAT_CSV
};

enum row_order
{
  ORDER_BYTES,
  ORDER_CALLS,
  ORDER_PER_CALL,
  ORDER_NAME
};

static const char *const order_names[]
    = { "bytes", "calls", "per-call", "name" };

/* One function of the table.  */
struct function_row
{
  const char *key;  /* what groups frames: the linkage name, or the
                       printed name of an unsymbolized frame */
  const char *name; /* demangled */
  const char *file; /* "" when unknown */
  bool debug_info;
  double calls, bytes;
  size_t contexts;
  size_t last_context; /* 1 + the last context counted: once per context */
};

struct function_table
{
  struct function_row *rows;
  size_t count, capacity;
  struct index_table index; /* by linkage name (or printed name) and file */
};

struct row_key
{
  const char *key, *file;
};

static uint64_t
hash_function (const char *key, const char *file)
{
  uint64_t hash = hash_bytes (key, strlen (key));
  return hash_mix (hash ^ hash_bytes (file, strlen (file)));
}

static uint64_t
row_hash (const void *owner, uint32_t index)
{
  const struct function_table *table = owner;
  return hash_function (table->rows[index].key, table->rows[index].file);
}

static bool
row_equals (const void *owner, uint32_t index, const void *key)
{
  const struct function_table *table = owner;
  const struct row_key *k = key;
  return strcmp (table->rows[index].key, k->key) == 0
         && strcmp (table->rows[index].file, k->file) == 0;
}

/* The row of FRAME's function, made on first sight.  Frames group by
   linkage name and file, so that two static functions of one name in two
   files are two rows; unsymbolized frames by their printed name.  */
static struct function_row *
row_for (struct function_table *table, const struct view_frame *frame)
{
  struct row_key key
      = { frame->function ? frame->function : frame->name, frame->file };
  index_table_reserve (&table->index, table->count, row_hash, table);
  uint32_t *slot
      = index_table_slot (&table->index, hash_function (key.key, key.file),
                          row_equals, table, &key);
  if (*slot != 0)
    return &table->rows[*slot - 1];
  table->rows = array_grow (table->rows, &table->capacity, table->count,
                            sizeof *table->rows);
  struct function_row *row = &table->rows[table->count];
  memset (row, 0, sizeof *row);
  /* The strings belong to the profile and the session, which outlive the
     table.  */
  row->key = key.key;
  row->name = frame->name;
  row->file = frame->file;
  row->debug_info = frame->debug_info;
  *slot = (uint32_t) ++table->count;
  return row;
}

/* Count CONTEXT (number INDEX) in ROW, unless it was counted there
   already.  */
static void
row_count (struct function_row *row, const struct profile_context *context,
           size_t index)
{
  if (row->last_context == index + 1)
    return;
  row->last_context = index + 1;
  row->calls += context->mib.alloc_count;
  row->bytes += (double) context->mib.total_size;
  row->contexts++;
}

/* The frame a context with N frames is counted for, exclusively.  */
static size_t
allocation_site (const struct view_frame *frames, size_t n,
                 bool skip_unsymbolized)
{
  size_t site = session_site (frames, n);
  if (site > 0)
    return site;
  if (skip_unsymbolized)
    for (size_t i = 0; i < n; i++)
      if (frames[i].debug_info)
        return i;
  return 0;
}

static bool
any_debug_info (const struct view_frame *frames, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (frames[i].debug_info)
      return true;
  return false;
}

static double
per_call (const struct function_row *row)
{
  return row->calls > 0 ? row->bytes / row->calls : 0;
}

static enum row_order sort_order;

static int
compare_rows (const void *a, const void *b)
{
  const struct function_row *x = a, *y = b;
  double kx = 0, ky = 0;
  switch (sort_order)
    {
    case ORDER_BYTES:
      kx = x->bytes, ky = y->bytes;
      break;
    case ORDER_CALLS:
      kx = x->calls, ky = y->calls;
      break;
    case ORDER_PER_CALL:
      kx = per_call (x), ky = per_call (y);
      break;
    case ORDER_NAME:
      break;
    }
  if (kx != ky)
    return kx > ky ? -1 : 1;
  if (sort_order != ORDER_NAME && x->bytes != y->bytes)
    return x->bytes > y->bytes ? -1 : 1;
  int by_name = strcmp (x->name, y->name);
  if (by_name != 0)
    return by_name;
  by_name = strcmp (x->file, y->file);
  return by_name != 0 ? by_name : strcmp (x->key, y->key);
}

/* ---- Output ---- */

struct totals
{
  double calls, bytes;
  size_t contexts;
  unsigned long long inputs;
  bool symbolized; /* some frame has a name */
};

static double
percent_of (double part, double whole)
{
  return whole > 0 ? 100 * part / whole : 0;
}

/* Names longer than this take a line of their own in text, with the
   numbers on the next line under their columns.  */
#define TEXT_NAME_WIDTH_MAX 60

static void
print_text (const struct function_table *table, size_t shown,
            const struct totals *totals, bool inclusive, bool skip_unsymbolized)
{
  char bytes[32], each[32];
  int width = (int) strlen ("function");
  for (size_t i = 0; i < shown; i++)
    {
      int length = (int) strlen (table->rows[i].name);
      if (length > width)
        width = length;
    }
  if (width > TEXT_NAME_WIDTH_MAX)
    width = TEXT_NAME_WIDTH_MAX;

  printf ("%zu function%s; %s in %.0f allocation calls (%zu contexts, %llu "
          "profile%s); sorted by %s.\n",
          table->count, table->count == 1 ? "" : "s",
          format_bytes (totals->bytes, bytes, sizeof bytes), totals->calls,
          totals->contexts, totals->inputs, totals->inputs == 1 ? "" : "s",
          order_names[sort_order]);
  if (inclusive)
    printf ("Inclusive: a function counts what it and its callees "
            "allocated; rows overlap.\n");
  else
    printf ("Exclusive: a function counts the allocations it called the "
            "allocator for.\n");
  if (skip_unsymbolized)
    printf ("Frames without debug information are skipped.\n");
  if (!totals->symbolized && totals->contexts > 0)
    printf ("No frame is symbolized: give the profiled program with "
            "--binary=FILE.\n");
  printf ("\n%-*s %10s %7s %10s %10s  %s\n", width, "function", "calls", "%",
          "bytes", "bytes/call", "file");
  for (size_t i = 0; i < shown; i++)
    {
      const struct function_row *row = &table->rows[i];
      if ((int) strlen (row->name) > width)
        printf ("%s\n%-*s", row->name, width, "");
      else
        printf ("%-*s", width, row->name);
      printf (" %10.0f %6.1f%% %10s %10s", row->calls,
              percent_of (row->bytes, totals->bytes),
              format_bytes (row->bytes, bytes, sizeof bytes),
              format_bytes (per_call (row), each, sizeof each));
      if (row->file[0] != '\0')
        printf ("  %s", row->file);
      putchar ('\n');
    }
  if (shown < table->count)
    printf ("... %zu more function%s (--top=0 shows them all)\n",
            table->count - shown, table->count - shown == 1 ? "" : "s");
  printf ("%-*s %10.0f %6.1f%% %10s %10s\n", width, "total", totals->calls,
          totals->bytes > 0 ? 100.0 : 0.0,
          format_bytes (totals->bytes, bytes, sizeof bytes),
          format_bytes (totals->calls > 0 ? totals->bytes / totals->calls : 0,
                        each, sizeof each));
}

static void
print_json (const struct function_table *table, size_t shown,
            const struct totals *totals, bool inclusive, bool skip_unsymbolized)
{
  printf ("{\n  \"mode\": \"%s\",\n  \"skip_unsymbolized\": %s,\n"
          "  \"sort\": \"%s\",\n  \"inputs\": %llu,\n  \"contexts\": %zu,\n"
          "  \"function_count\": %zu,\n"
          "  \"total\": {\"calls\": %.0f, \"bytes\": %.0f},\n"
          "  \"functions\": [",
          inclusive ? "inclusive" : "exclusive",
          skip_unsymbolized ? "true" : "false", order_names[sort_order],
          totals->inputs, totals->contexts, table->count, totals->calls,
          totals->bytes);
  for (size_t i = 0; i < shown; i++)
    {
      const struct function_row *row = &table->rows[i];
      printf ("%s\n    {\"name\": ", i ? "," : "");
      emit_json_string (stdout, row->name);
      printf (", \"function\": ");
      emit_json_string (stdout, row->key);
      printf (", \"file\": ");
      emit_json_string (stdout, row->file);
      printf (", \"debug_info\": %s, \"calls\": %.0f, \"bytes\": %.0f, "
              "\"percent\": %.10g, \"bytes_per_call\": %.10g, "
              "\"contexts\": %zu}",
              row->debug_info ? "true" : "false", row->calls, row->bytes,
              percent_of (row->bytes, totals->bytes), per_call (row),
              row->contexts);
    }
  printf ("\n  ]\n}\n");
}

/* TEXT as a CSV field (RFC 4180): quoted when it holds a comma, a quote or
   a line break, with quotes doubled.  */
static void
print_csv_field (const char *text)
{
  if (strpbrk (text, ",\"\r\n") == NULL)
    {
      fputs (text, stdout);
      return;
    }
  putchar ('"');
  for (const char *p = text; *p; p++)
    {
      if (*p == '"')
        putchar ('"');
      putchar (*p);
    }
  putchar ('"');
}

static void
print_csv (const struct function_table *table, size_t shown,
           const struct totals *totals)
{
  printf ("name,function,file,debug_info,calls,bytes,percent,bytes_per_call,"
          "contexts\n");
  for (size_t i = 0; i < shown; i++)
    {
      const struct function_row *row = &table->rows[i];
      print_csv_field (row->name);
      putchar (',');
      print_csv_field (row->key);
      putchar (',');
      print_csv_field (row->file);
      printf (",%d,%.0f,%.0f,%.10g,%.10g,%zu\n", row->debug_info ? 1 : 0,
              row->calls, row->bytes, percent_of (row->bytes, totals->bytes),
              per_call (row), row->contexts);
    }
}

int
cmd_functions (int argc, char **argv)
{
  if (command_help_requested (argc, argv))
    {
      fputs (usage, stdout);
      return 0;
    }
  struct session session;
  session_init (&session);
  bool inclusive = false, skip_unsymbolized = false;
  enum format format = FORMAT_TEXT;
  long top = -1;
  sort_order = ORDER_BYTES;
  char **inputs = xcalloc ((size_t) argc, sizeof *inputs);
  int input_count = 0;
  for (int i = 1; i < argc; i++)
    {
      const char *arg = argv[i];
      if (session_option (&session, argc, argv, &i))
        continue;
      if (strcmp (arg, "--inclusive") == 0)
        inclusive = true;
      else if (strcmp (arg, "--skip-unsymbolized") == 0)
        skip_unsymbolized = true;
      else if (strncmp (arg, "--sort=", 7) == 0)
        {
          size_t k = 0;
          while (k < sizeof order_names / sizeof order_names[0]
                 && strcmp (arg + 7, order_names[k]) != 0)
            k++;
          if (k == sizeof order_names / sizeof order_names[0])
            command_usage_error ("functions",
                                 "unknown sort key '%s' (bytes, "
                                 "calls, per-call or name)",
                                 arg + 7);
          sort_order = (enum row_order) k;
        }
      else if (strncmp (arg, "--top=", 6) == 0)
        top = command_count ("functions", "--top", arg + 6);
      else if (strncmp (arg, "--format=", 9) == 0)
        {
          static const char *const formats[] = { "text", "json", "csv", NULL };
          static const enum format values[]
              = { FORMAT_TEXT, FORMAT_JSON, FORMAT_CSV };
          format = values[command_choice ("functions", "format", arg + 9,
                                          formats)];
        }
      else if (strcmp (arg, "--") == 0)
        {
          while (++i < argc)
            inputs[input_count++] = argv[i];
        }
      else if (arg[0] == '-' && arg[1] != '\0')
        command_usage_error ("functions", "unknown option '%s'", arg);
      else
        inputs[input_count++] = argv[i];
    }
  if (input_count == 0)
    command_usage_error ("functions", "no profile given");

  session_load (&session, inputs, input_count, true);
  session_symbolize (&session);
  struct profile *profile = &session.profile;

  struct function_table table = { 0 };
  struct totals totals = { 0 };
  totals.inputs = (unsigned long long) profile->inputs;
  totals.contexts = profile->context_count;
  struct view_frame *frames = NULL;
  size_t capacity = 0;
  static const struct view_frame no_frames
      = { .name = "[no frames]", .file = "" };
  for (size_t c = 0; c < profile->context_count; c++)
    {
      const struct profile_context *context = &profile->contexts[c];
      totals.calls += context->mib.alloc_count;
      totals.bytes += (double) context->mib.total_size;
      size_t n = session_frames (&session, context, false, &frames, &capacity);
      for (size_t i = 0; i < n && !totals.symbolized; i++)
        totals.symbolized = frames[i].function != NULL;
      if (n == 0)
        row_count (row_for (&table, &no_frames), context, c);
      else if (!inclusive)
        row_count (
            row_for (&table,
                     &frames[allocation_site (frames, n, skip_unsymbolized)]),
            context, c);
      else
        {
          /* A context with no frame with debug information keeps its
             frames, as its allocation site is then its leaf.  */
          bool skip = skip_unsymbolized && any_debug_info (frames, n);
          for (size_t i = 0; i < n; i++)
            if (!skip || frames[i].debug_info)
              row_count (row_for (&table, &frames[i]), context, c);
        }
    }
  free (frames);

  qsort (table.rows, table.count, sizeof *table.rows, compare_rows);
  if (top < 0)
    top = format == FORMAT_TEXT ? 20 : 0;
  size_t shown
      = top > 0 && (size_t) top < table.count ? (size_t) top : table.count;
  switch (format)
    {
    case FORMAT_TEXT:
      print_text (&table, shown, &totals, inclusive, skip_unsymbolized);
      break;
    case FORMAT_JSON:
      print_json (&table, shown, &totals, inclusive, skip_unsymbolized);
      break;
    case FORMAT_CSV:
      print_csv (&table, shown, &totals);
      break;
    }
  free (table.rows);
  index_table_free (&table.index);
  free (inputs);
  session_free (&session);
  return 0;
}
