/* memprof diff: what changed from profile A to profile B, context by
   context.  Contexts are matched by their symbolized frames (function,
   line offset from the function's first line, column), so that profiles
   of two builds of a program match where their code did not move;
   unsymbolized frames match by address.  */

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "emit.h"
#include "metrics.h"
#include "session.h"
#include "util.h"

static const char usage[]
    = "usage: memprof diff [options] A B\n"
      "\n"
      "Per-context change from profile A (the base) to profile B: new "
      "contexts,\n"
      "vanished ones, and changed ones, largest change first. A and B are "
      "raw\n"
      "profiles or .mprof files; each side may be several files joined with "
      "a\n"
      "comma (a,b,c), merged first.\n"
      "\n"
      "  --binary=FILE     symbolize with FILE; it is applied to whichever "
      "side its\n"
      "                    build id belongs to (give the old and the new "
      "binary)\n"
      "  --no-libraries    do not look for the program's shared "
      "libraries\n"
      "  --sort=KEY        bytes|allocs|accesses|peak (default bytes): the "
      "change\n"
      "                    ranked; peak: bytes live at each side's heap "
      "peak\n"
      "  --top=N           the first N changes (default 20 in text, all in "
      "JSON)\n"
      "  --format=text|json\n"
      "\n"
      "Example:\n"
      "  memprof diff --binary=old/app --binary=new/app old.mprof new.mprof\n";

enum status
{
  CHANGED,
  NEW,
  VANISHED
};

/* One matched context: its values on each side.  */
struct entry
{
  char *key;
  double bytes[2], allocs[2], accesses[2], peak[2];
  uint32_t context[2]; /* UINT32_MAX: not on that side */
};

struct table
{
  struct entry *entries;
  size_t count, capacity;
  struct index_table index; /* by key */
};

static uint64_t
entry_hash (const void *owner, uint32_t index)
{
  const struct table *table = owner;
  const char *key = table->entries[index].key;
  return hash_bytes (key, strlen (key));
}

static bool
entry_equals (const void *owner, uint32_t index, const void *key)
{
  const struct table *table = owner;
  return strcmp (table->entries[index].key, key) == 0;
}

/* The entry of KEY (taken over), made on first sight.  */
static struct entry *
entry_for (struct table *table, char *key)
{
  index_table_reserve (&table->index, table->count, entry_hash, table);
  uint32_t *slot = index_table_slot (
      &table->index, hash_bytes (key, strlen (key)), entry_equals, table, key);
  if (*slot != 0)
    {
      free (key);
      return &table->entries[*slot - 1];
    }
  table->entries = array_grow (table->entries, &table->capacity, table->count,
                               sizeof *table->entries);
  struct entry *entry = &table->entries[table->count];
  memset (entry, 0, sizeof *entry);
  entry->key = key;
  entry->context[0] = entry->context[1] = UINT32_MAX;
  *slot = (uint32_t) ++table->count;
  return entry;
}

static void
add_side (struct table *table, struct session *session, int side)
{
  struct view_frame *frames = NULL;
  size_t capacity = 0;
  struct profile *profile = &session->profile;
  for (size_t c = 0; c < profile->context_count; c++)
    {
      const struct profile_context *context = &profile->contexts[c];
      struct entry *entry = entry_for (
          table, session_context_key (session, context, &frames, &capacity));
      entry->bytes[side] += (double) context->mib.total_size;
      entry->allocs[side] += context->mib.alloc_count;
      entry->accesses[side] += (double) context->mib.total_access_count;
      entry->peak[side] += (double) context->peak_bytes;
      if (entry->context[side] == UINT32_MAX)
        entry->context[side] = (uint32_t) c;
    }
  free (frames);
}

static const double *
values_of (const struct entry *entry, enum sort_key key)
{
  return key == SORT_ALLOCS     ? entry->allocs
         : key == SORT_ACCESSES ? entry->accesses
         : key == SORT_PEAK     ? entry->peak
                                : entry->bytes;
}

static enum sort_key diff_sort;

static int
compare_entries (const void *a, const void *b)
{
  const struct entry *x = a, *y = b;
  const double *vx = values_of (x, diff_sort), *vy = values_of (y, diff_sort);
  double dx = fabs (vx[1] - vx[0]), dy = fabs (vy[1] - vy[0]);
  if (dx != dy)
    return dx > dy ? -1 : 1;
  return strcmp (x->key, y->key);
}

static void
split_inputs (char *arg, char ***paths, int *count)
{
  *count = 0;
  *paths = xcalloc (strlen (arg) + 1, sizeof **paths);
  char *save = NULL;
  for (char *path = strtok_r (arg, ",", &save); path != NULL;
       path = strtok_r (NULL, ",", &save))
    (*paths)[(*count)++] = path;
}

static enum status
status_of (const struct entry *entry)
{
  return entry->context[0] == UINT32_MAX   ? NEW
         : entry->context[1] == UINT32_MAX ? VANISHED
                                           : CHANGED;
}

int
cmd_diff (int argc, char **argv)
{
  if (command_help_requested (argc, argv))
    {
      fputs (usage, stdout);
      return 0;
    }
  struct session sides[2], binaries;
  session_init (&sides[0]);
  session_init (&sides[1]);
  session_init (&binaries);
  bool json = false;
  long top = -1;
  diff_sort = SORT_BYTES;
  char *names[2] = { NULL, NULL };
  int name_count = 0;
  for (int i = 1; i < argc; i++)
    {
      const char *arg = argv[i];
      if (session_option (&binaries, argc, argv, &i))
        continue;
      if (strncmp (arg, "--sort=", 7) == 0)
        {
          int key = sort_key_parse (arg + 7);
          if (key != SORT_BYTES && key != SORT_ALLOCS && key != SORT_ACCESSES
              && key != SORT_PEAK)
            command_usage_error ("diff",
                                 "the sort key must be bytes, allocs, "
                                 "accesses or peak, not '%s'",
                                 arg + 7);
          diff_sort = (enum sort_key) key;
        }
      else if (strncmp (arg, "--top=", 6) == 0)
        top = command_count ("diff", "--top", arg + 6);
      else if (strncmp (arg, "--format=", 9) == 0)
        json = command_choice ("diff", "format", arg + 9, command_text_or_json)
               == 1;
      else if (arg[0] == '-' && arg[1] != '\0')
        command_usage_error ("diff", "unknown option '%s'", arg);
      else if (name_count < 2)
        names[name_count++] = argv[i];
      else
        command_usage_error ("diff", "two profiles, not more (join several "
                                     "files of one side with commas)");
    }
  if (name_count != 2)
    command_usage_error ("diff", "give two profiles, A and B");

  for (int side = 0; side < 2; side++)
    {
      char **paths;
      int count;
      split_inputs (names[side], &paths, &count);
      if (count == 0)
        command_usage_error ("diff", "an empty list of profiles");
      session_load (&sides[side], paths, count, false);
      free (paths);
    }
  session_symbolize_sides (sides, 2, &binaries);

  struct table table = { 0 };
  add_side (&table, &sides[0], 0);
  add_side (&table, &sides[1], 1);
  qsort (table.entries, table.count, sizeof *table.entries, compare_entries);
  size_t changed = 0;
  for (size_t i = 0; i < table.count; i++)
    {
      const double *v = values_of (&table.entries[i], diff_sort);
      if (v[0] != v[1] || status_of (&table.entries[i]) != CHANGED)
        changed++;
    }
  size_t limit = top >= 0 ? (size_t) top : json ? 0 : 20;
  size_t shown = limit > 0 && limit < changed ? limit : changed;

  double totals[2] = { 0, 0 };
  for (size_t i = 0; i < table.count; i++)
    for (int side = 0; side < 2; side++)
      totals[side] += values_of (&table.entries[i], diff_sort)[side];
  static const char *const status_names[] = { "changed", "new", "vanished" };
  struct view_frame *frames = NULL;
  size_t capacity = 0;
  char line[1024];
  if (json)
    printf ("{\n  \"metric\": \"%s\",\n  \"total\": {\"a\": %.0f, \"b\": "
            "%.0f},\n  \"changes\": [",
            sort_key_name (diff_sort), totals[0], totals[1]);
  else
    printf ("%s: %.0f in A, %.0f in B (%+.0f); %zu of %zu contexts changed%s\n",
            sort_key_name (diff_sort), totals[0], totals[1],
            totals[1] - totals[0], changed, table.count,
            shown < changed ? ", the largest changes first:" : ":");
  size_t printed = 0;
  for (size_t i = 0; i < table.count && printed < shown; i++)
    {
      const struct entry *entry = &table.entries[i];
      const double *v = values_of (entry, diff_sort);
      enum status status = status_of (entry);
      if (v[0] == v[1] && status == CHANGED)
        continue;
      printed++;
      int side = status == NEW ? 1 : 0;
      struct session *session = &sides[side];
      size_t n = session_frames (
          session, &session->profile.contexts[entry->context[side]], false,
          &frames, &capacity);
      if (json)
        {
          printf ("%s\n    {\"status\": \"%s\", \"a\": %.0f, \"b\": %.0f, "
                  "\"delta\": %.0f, \"bytes\": [%.0f, %.0f], \"allocs\": "
                  "[%.0f, %.0f], \"accesses\": [%.0f, %.0f], \"frames\": [",
                  printed > 1 ? "," : "", status_names[status], v[0], v[1],
                  v[1] - v[0], entry->bytes[0], entry->bytes[1],
                  entry->allocs[0], entry->allocs[1], entry->accesses[0],
                  entry->accesses[1]);
          for (size_t f = 0; f < n; f++)
            {
              printf ("%s", f ? ", " : "");
              emit_json_string (
                  stdout, session_frame_text (&frames[f], line, sizeof line));
            }
          printf ("]}");
        }
      else
        {
          printf ("\n%-8s %14.0f -> %-14.0f %+.0f", status_names[status], v[0],
                  v[1], v[1] - v[0]);
          if (v[0] > 0)
            printf (" (%+.1f%%)", 100 * (v[1] - v[0]) / v[0]);
          printf ("\n");
          session_print_frames (
              session, &session->profile.contexts[entry->context[side]],
              "         ", 6, false);
        }
    }
  if (json)
    printf ("\n  ]\n}\n");
  for (size_t i = 0; i < table.count; i++)
    free (table.entries[i].key);
  free (table.entries);
  index_table_free (&table.index);
  free (frames);
  session_free (&sides[0]);
  session_free (&sides[1]);
  session_free (&binaries);
  return 0;
}
