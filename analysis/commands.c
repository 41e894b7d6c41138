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
