/* Options compiled into the program, read at start-up before
   MEMPROF_OPTIONS (which overrides every one of them):

   1. __memprof_profile_filename, clang's name for the profile's path (a
      program or clang's -fmemory-profile=PATH may define it): the
      profile_file option when not empty;
   2. __memprof_default_options_str, the string the plugin's
      -fplugin-arg-memprof-default-options=OPTIONS embeds in the program
      (gcc-plugin/default_options.cc);
   3. __memprof_default_options (), a function the program may define, as
      LLVM's runtime reads it; the runtime's own definition is weak and
      returns "".

   Each later one overrides the earlier ones key by key.  A bad option in
   any of them is reported as MEMPROF_OPTIONS' are, naming where it came
   from, and never stops the program.  */

#include "internal.h"

#include <string.h>

/* Defined by the plugin in every module built with default-options (weak,
   so that several modules may define it); absent otherwise.  A weak
   reference, so that the runtime never competes with the program's
   definition, shared or static.  */
extern const char __memprof_default_options_str[]
    __attribute__ ((weak, visibility ("default")));

MEMPROF_EXPORT __attribute__ ((weak)) const char *
__memprof_default_options (void)
{
  return "";
}

void
options_apply_compiled (struct memprof_options *options,
                        memprof_option_report_fn report, void *cookie)
{
  const char *text;

  if (__memprof_profile_filename[0] != '\0')
    {
      size_t length
          = strnlen (__memprof_profile_filename, MEMPROF_OPTION_STRING_MAX);
      if (length < MEMPROF_OPTION_STRING_MAX)
        memcpy (options->profile_file, __memprof_profile_filename, length + 1);
      else
        report (cookie, "__memprof_profile_filename: the name is too long; "
                        "profile_file keeps its default");
    }
  if (__memprof_default_options_str != NULL)
    options_parse (options, __memprof_default_options_str,
                   "-fplugin-arg-memprof-default-options", report, cookie);
  text = __memprof_default_options ();
  if (text != NULL)
    options_parse (options, text, "__memprof_default_options()", report,
                   cookie);
}
