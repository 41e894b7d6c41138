/* What every subcommand shares: --help and usage errors.  */

#include "commands.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

int
command_help_requested (int argc, char **argv)
{
  for (int i = 1; i < argc; i++)
    {
      if (strcmp (argv[i], "--") == 0)
        break;
      if (strcmp (argv[i], "--help") == 0 || strcmp (argv[i], "-h") == 0)
        return 1;
    }
  return 0;
}

void
command_usage_error (const char *command, const char *format, ...)
{
  va_list args;
  fflush (stdout);
  fprintf (stderr, "memprof: %s: ", command);
  va_start (args, format);
  vfprintf (stderr, format, args);
  va_end (args);
  fprintf (stderr, "; see 'memprof %s --help'\n", command);
  exit (EXIT_BAD_INPUT);
}

double
command_number (const char *command, const char *option, const char *value,
                double low, double high)
{
  char *end;
  double number = strtod (value, &end);
  if (*value == '\0' || *end != '\0' || !(number >= low && number <= high))
    command_usage_error (command, "%s expects a number from %g to %g, not '%s'",
                         option, low, high, value);
  return number;
}

long
command_count (const char *command, const char *option, const char *value)
{
  char *end;
  long count = strtol (value, &end, 10);
  if (*value == '\0' || *end != '\0' || count < 0)
    command_usage_error (command, "%s expects a count, not '%s'", option,
                         value);
  return count;
}

const char *const command_text_or_json[] = { "text", "json", NULL };

int
command_choice (const char *command, const char *what, const char *value,
                const char *const *names)
{
  char list[256] = "";
  size_t count = 0, used = 0;
  for (; names[count] != NULL; count++)
    if (strcmp (value, names[count]) == 0)
      return (int) count;
  for (size_t i = 0; i < count && used < sizeof list; i++)
    used += (size_t) snprintf (list + used, sizeof list - used, "%s%s",
                               i == 0           ? ""
                               : i + 1 == count ? " or "
                                                : ", ",
                               names[i]);
  command_usage_error (command, "unknown %s '%s' (%s)", what, value, list);
}
