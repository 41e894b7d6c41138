/* memprof merge: many profiles (raw, with side files, and .mprof) into one
   .mprof file.  The inputs are read one at a time, so memory grows with
   the merged result, not with the inputs; the result does not depend on
   their order.  */

#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "mprof.h"
#include "session.h"
#include "util.h"

static const char usage[]
    = "usage: memprof merge [options] -o OUTPUT PROFILE...\n"
      "\n"
      "Merge profiles (raw MemProf profiles, with their .extra side files; "
      ".mprof\n"
      "files) into one .mprof file: contexts with the same call stack add "
      "up.\n"
      "The result is the same whatever the order of the inputs, and merging\n"
      "merged files gives what merging their inputs at once gives.\n"
      "\n"
      "  -o FILE, --output=FILE  the .mprof file to write (\"-\": stdout); "
      "written\n"
      "                          under a temporary name and renamed when "
      "complete\n"
      "  --binary=FILE           symbolize with FILE's DWARF and keep the "
      "frames in\n"
      "                          the output, so later commands need no "
      "binary\n"
      "                          (repeat for shared libraries)\n"
      "  --no-libraries          do not look for the program's shared "
      "libraries\n"
      "  --inputs=FILE           also read the profile names in FILE, one "
      "per line\n"
      "  --quiet                 no progress line\n"
      "\n"
      "Example:\n"
      "  memprof merge --binary=./app -o app.mprof memprof.profraw.*\n";

/* Read the names in PATH, one per line, appending them to *NAMES.  */
static void
read_input_list (const char *path, char ***names, int *count, int *capacity)
{
  FILE *list = strcmp (path, "-") == 0 ? stdin : fopen (path, "r");
  if (list == NULL)
    die (EXIT_BAD_INPUT, "%s: cannot open the list of inputs", path);
  char *line = NULL;
  size_t size = 0;
  ssize_t length;
  while ((length = getline (&line, &size, list)) >= 0)
    {
      while (length > 0
             && (line[length - 1] == '\n' || line[length - 1] == '\r'))
        line[--length] = '\0';
      if (length == 0)
        continue;
      if (*count == *capacity)
        {
          *capacity = *capacity ? *capacity * 2 : 64;
          *names = xrealloc (*names, (size_t) *capacity * sizeof **names);
        }
      (*names)[(*count)++] = xstrdup (line);
    }
  free (line);
  if (list != stdin)
    fclose (list);
}

int
cmd_merge (int argc, char **argv)
{
  if (command_help_requested (argc, argv))
    {
      fputs (usage, stdout);
      return 0;
    }
  struct session session;
  session_init (&session);
  const char *output = NULL;
  bool quiet = false;
  char **inputs = NULL;
  int input_count = 0, input_capacity = 0;
  for (int i = 1; i < argc; i++)
    {
      const char *arg = argv[i];
      const char *list = NULL;
      if (session_option (&session, argc, argv, &i))
        continue;
      if (strcmp (arg, "-o") == 0 || strcmp (arg, "--output") == 0)
        {
          if (i + 1 >= argc)
            command_usage_error ("merge", "%s needs a file name", arg);
          output = argv[++i];
          continue;
        }
      if (strncmp (arg, "--output=", 9) == 0)
        {
          output = arg + 9;
          continue;
        }
      if (strcmp (arg, "--quiet") == 0)
        {
          quiet = true;
          continue;
        }
      if (strncmp (arg, "--inputs=", 9) == 0)
        list = arg + 9;
      else if (arg[0] == '-' && arg[1] != '\0')
        command_usage_error ("merge", "unknown option '%s'", arg);
      if (list != NULL)
        {
          read_input_list (list, &inputs, &input_count, &input_capacity);
          continue;
        }
      if (input_count == input_capacity)
        {
          input_capacity = input_capacity ? input_capacity * 2 : 64;
          inputs = xrealloc (inputs, (size_t) input_capacity * sizeof *inputs);
        }
      inputs[input_count++] = xstrdup (arg);
    }
  if (output == NULL)
    command_usage_error ("merge", "no output file (-o FILE)");
  if (input_count == 0)
    command_usage_error ("merge", "no profile given");

  session_load (&session, inputs, input_count, !quiet);
  session_symbolize (&session);
  char error[1024];
  if (mprof_write (&session.profile, output, error, sizeof error) != 0)
    die (1, "%s", error);
  if (!quiet && strcmp (output, "-") != 0)
    fprintf (stderr,
             "memprof: merged %d file%s (%llu profiles) into %s: %zu "
             "contexts\n",
             input_count, input_count == 1 ? "" : "s",
             (unsigned long long) session.profile.inputs, output,
             session.profile.context_count);
  for (int i = 0; i < input_count; i++)
    free (inputs[i]);
  free (inputs);
  session_free (&session);
  return 0;
}
