/* memprof module-show: a profiling module's output file (docs/modules.md,
   "The output format"), as aligned tables or JSON, its code addresses
   symbolized.

   The format: a first line "memprof-module<TAB>NAME"; then tables, each
   a line "table<TAB>TITLE", a line of column names and rows, fields
   separated by tabs.  A field "@FILE+0xOFFSET" is a code address (an
   ELF address of FILE); it is shown as the function, file, line and
   column libdw finds for it, the functions it was inlined into after
   " < ".  */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "emit.h"
#include "symbolize.h"
#include "util.h"

static const char usage[]
    = "usage: memprof module-show [options] FILE\n"
      "\n"
      "Shows the output file of a profiling module (MEMPROF_OPTIONS="
      "module=...,\n"
      "docs/modules.md): each table with aligned columns, code addresses "
      "(@FILE+0xOFFSET)\n"
      "symbolized against FILE's DWARF.\n"
      "\n"
      "  --top=N             at most N rows of each table (default: all)\n"
      "  --table=TITLE       only that table\n"
      "  --no-symbolize      leave code addresses as they are\n"
      "  --format=text|json  (default text)\n"
      "\n"
      "Example:\n"
      "  memprof module-show memprof-lifetime.txt\n";

#define FIELDS_MAX 32
#define SYMBOLIZERS_MAX 16
#define FRAMES_MAX 8

struct row
{
  char *fields[FIELDS_MAX];
  int count;
};

struct table
{
  char *title;
  struct row columns;
  struct row *rows;
  size_t row_count, row_capacity;
};

static struct
{
  char *file;
  struct symbolizer *symbolizer; /* NULL when it cannot be opened */
} symbolizers[SYMBOLIZERS_MAX];
static int symbolizer_count;

/* Split LINE (modified) at tabs into ROW.  False when it has more than
   FIELDS_MAX fields.  */
static bool
split (char *line, struct row *row)
{
  row->count = 0;
  for (char *field = line;; field++)
    {
      char *tab = strchr (field, '\t');
      if (row->count == FIELDS_MAX)
        return false;
      row->fields[row->count++] = field;
      if (tab == NULL)
        return true;
      *tab = '\0';
      field = tab;
    }
}

static struct symbolizer *
symbolizer_for (const char *file)
{
  char error[512];
  for (int i = 0; i < symbolizer_count; i++)
    if (strcmp (symbolizers[i].file, file) == 0)
      return symbolizers[i].symbolizer;
  if (symbolizer_count == SYMBOLIZERS_MAX)
    return NULL;
  struct symbolizer *symbolizer = symbolizer_open (file, error, sizeof error);
  if (symbolizer == NULL)
    fprintf (stderr,
             "memprof: module-show: %s; its addresses stay as they "
             "are\n",
             error);
  symbolizers[symbolizer_count].file = xstrdup (file);
  symbolizers[symbolizer_count++].symbolizer = symbolizer;
  return symbolizer;
}

/* FIELD symbolized when it is a code address "@FILE+0xOFFSET", else
   FIELD; malloc'd.  */
static char *
symbolized (const char *field)
{
  const char *plus = field[0] == '@' ? strrchr (field, '+') : NULL;
  struct symbol_frame frames[FRAMES_MAX];
  char *end;
  if (plus == NULL || strncmp (plus, "+0x", 3) != 0)
    return xstrdup (field);
  uint64_t address = strtoull (plus + 3, &end, 16);
  if (*end != '\0')
    return xstrdup (field);
  size_t file_length = (size_t) (plus - field - 1);
  char *file = xmalloc (file_length + 1);
  memcpy (file, field + 1, file_length);
  file[file_length] = '\0';
  struct symbolizer *symbolizer = symbolizer_for (file);
  free (file);
  int count = symbolizer
                  ? symbolizer_lookup (symbolizer, address, frames, FRAMES_MAX)
                  : 0;
  if (count <= 0)
    return xstrdup (field);
  size_t size = 1;
  for (int i = 0; i < count; i++)
    size += strlen (frames[i].function) + strlen (frames[i].file) + 40;
  char *text = xmalloc (size), *p = text;
  for (int i = 0; i < count; i++)
    p += sprintf (p, "%s%s %s:%" PRIu32 ":%" PRIu32, i ? " < " : "",
                  frames[i].function, frames[i].file, frames[i].line,
                  frames[i].column);
  return text;
}

/* Read FILE's tables into *TABLES; false with a message naming the file
   and the line when it is not a module's output.  */
static bool
read_tables (const char *path, char **module, struct table **tables,
             size_t *table_count, bool symbolize)
{
  FILE *in = fopen (path, "r");
  char *line = NULL;
  size_t capacity = 0, table_capacity = 0;
  ssize_t length;
  unsigned number = 0;
  struct table *current = NULL;
  struct row row;

  if (in == NULL)
    {
      fprintf (stderr, "memprof: module-show: cannot read %s: %s\n", path,
               strerror (errno));
      return false;
    }
  *tables = NULL;
  *table_count = 0;
  while ((length = getline (&line, &capacity, in)) >= 0)
    {
      number++;
      if (length > 0 && line[length - 1] == '\n')
        line[length - 1] = '\0';
      if (!split (line, &row))
        goto bad;
      if (number == 1)
        {
          if (row.count != 2 || strcmp (row.fields[0], "memprof-module") != 0)
            goto bad;
          *module = xstrdup (row.fields[1]);
          continue;
        }
      if (row.count == 2 && strcmp (row.fields[0], "table") == 0)
        {
          if (*table_count == table_capacity)
            {
              table_capacity = table_capacity ? 2 * table_capacity : 4;
              *tables = xrealloc (*tables, table_capacity * sizeof **tables);
            }
          current = &(*tables)[(*table_count)++];
          memset (current, 0, sizeof *current);
          current->title = xstrdup (row.fields[1]);
          current->columns.count = -1;
          continue;
        }
      if (current == NULL)
        goto bad;
      if (current->columns.count < 0)
        {
          current->columns = row;
          for (int i = 0; i < row.count; i++)
            current->columns.fields[i] = xstrdup (row.fields[i]);
          continue;
        }
      if (row.count != current->columns.count)
        {
          fprintf (stderr,
                   "memprof: module-show: %s:%u: %d fields where table '%s' "
                   "has %d columns\n",
                   path, number, row.count, current->title,
                   current->columns.count);
          goto fail;
        }
      if (current->row_count == current->row_capacity)
        {
          current->row_capacity
              = current->row_capacity ? 2 * current->row_capacity : 16;
          current->rows = xrealloc (current->rows, current->row_capacity
                                                       * sizeof *current->rows);
        }
      struct row *copy = &current->rows[current->row_count++];
      copy->count = row.count;
      for (int i = 0; i < row.count; i++)
        copy->fields[i]
            = symbolize ? symbolized (row.fields[i]) : xstrdup (row.fields[i]);
    }
  if (number == 0)
    goto bad;
  free (line);
  fclose (in);
  return true;
bad:
  fprintf (stderr,
           "memprof: module-show: %s:%u: not a profiling module's output "
           "(a first line \"memprof-module<TAB>NAME\", then \"table<TAB>"
           "TITLE\", columns and rows separated by tabs: docs/modules.md)\n",
           path, number);
fail:
  free (line);
  fclose (in);
  return false;
}

static void
print_text (const char *module, const struct table *tables, size_t count,
            size_t top)
{
  printf ("module %s\n", module);
  for (size_t t = 0; t < count; t++)
    {
      const struct table *table = &tables[t];
      size_t rows = top && table->row_count > top ? top : table->row_count;
      size_t widths[FIELDS_MAX];
      if (table->columns.count < 0)
        continue;
      printf ("\n%s (%zu rows%s)\n", table->title, table->row_count,
              rows < table->row_count ? ", the first shown" : "");
      for (int c = 0; c < table->columns.count; c++)
        {
          widths[c] = strlen (table->columns.fields[c]);
          for (size_t r = 0; r < rows; r++)
            if (strlen (table->rows[r].fields[c]) > widths[c])
              widths[c] = strlen (table->rows[r].fields[c]);
        }
      for (size_t r = 0; r <= rows; r++)
        {
          const struct row *row
              = r == 0 ? &table->columns : &table->rows[r - 1];
          for (int c = 0; c < row->count; c++)
            printf ("%s%-*s", c ? "  " : "  ",
                    c + 1 == row->count ? 0 : (int) widths[c], row->fields[c]);
          putchar ('\n');
        }
    }
}

static void
print_json (const char *module, const struct table *tables, size_t count,
            size_t top)
{
  printf ("{\"module\": ");
  emit_json_string (stdout, module);
  printf (", \"tables\": [");
  for (size_t t = 0; t < count; t++)
    {
      const struct table *table = &tables[t];
      size_t rows = top && table->row_count > top ? top : table->row_count;
      printf ("%s\n  {\"title\": ", t ? "," : "");
      emit_json_string (stdout, table->title);
      printf (", \"rows\": [");
      for (size_t r = 0; r < rows; r++)
        {
          printf ("%s\n    {", r ? "," : "");
          for (int c = 0; c < table->columns.count; c++)
            {
              printf ("%s", c ? ", " : "");
              emit_json_string (stdout, table->columns.fields[c]);
              printf (": ");
              emit_json_string (stdout, table->rows[r].fields[c]);
            }
          printf ("}");
        }
      printf ("]}");
    }
  printf ("\n]}\n");
}

int
cmd_module_show (int argc, char **argv)
{
  static const char *const formats[] = { "text", "json", NULL };
  const char *path = NULL, *only = NULL;
  int format = 0;
  size_t top = 0, count = 0;
  bool symbolize = true;
  struct table *tables;
  char *module = NULL;

  if (command_help_requested (argc, argv))
    {
      fputs (usage, stdout);
      return 0;
    }
  for (int i = 1; i < argc; i++)
    {
      const char *arg = argv[i];
      if (strncmp (arg, "--top=", 6) == 0)
        top = (size_t) command_count ("module-show", "--top", arg + 6);
      else if (strncmp (arg, "--table=", 8) == 0)
        only = arg + 8;
      else if (strcmp (arg, "--no-symbolize") == 0)
        symbolize = false;
      else if (strncmp (arg, "--format=", 9) == 0)
        format = command_choice ("module-show", "format", arg + 9, formats);
      else if (arg[0] == '-' && arg[1] != '\0')
        command_usage_error ("module-show", "unknown option '%s'", arg);
      else if (path != NULL)
        command_usage_error ("module-show", "one FILE only ('%s' and '%s')",
                             path, arg);
      else
        path = arg;
    }
  if (path == NULL)
    command_usage_error ("module-show", "no FILE given");
  if (!read_tables (path, &module, &tables, &count, symbolize))
    return 2;
  if (only != NULL)
    {
      size_t kept = 0;
      for (size_t t = 0; t < count; t++)
        if (strcmp (tables[t].title, only) == 0)
          tables[kept++] = tables[t];
      if (kept == 0)
        {
          fprintf (stderr, "memprof: module-show: %s has no table '%s'\n", path,
                   only);
          return 2;
        }
      count = kept;
    }
  if (format == 1)
    print_json (module, tables, count, top);
  else
    print_text (module, tables, count, top);
  for (int i = 0; i < symbolizer_count; i++)
    if (symbolizers[i].symbolizer)
      symbolizer_close (symbolizers[i].symbolizer);
  return 0;
}
