/* Options compiled into the program.  Built with -DPROGRAM_DEFAULTS="..."
   it defines __memprof_default_options; with -DPROFILE_FILENAME="..." it
   defines clang's __memprof_profile_filename; the plugin's
   -fplugin-arg-memprof-default-options may embed a string too.  It prints
   the options in force.  default_options_other.c is a second unit (two
   units embedding the string must link).  */
#include <stdio.h>
#include <stdlib.h>

#include <memprof/interface.h>

#ifdef PROGRAM_DEFAULTS
const char *
__memprof_default_options (void)
{
  return PROGRAM_DEFAULTS;
}
#endif

#ifdef PROFILE_FILENAME
char __memprof_profile_filename[] = PROFILE_FILENAME;
#endif

void other_unit (void);

int
main (void)
{
  static const char *const names[] = { "profile_file", "max_stack_depth",
                                       "dump_interval_s", "sample_interval" };
  char value[1024];

  other_unit ();
  for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++)
    {
      memprof_get_option (names[i], value, sizeof value);
      printf ("%s%s=%s", i ? " " : "", names[i], value);
    }
  putchar ('\n');
  return 0;
}
