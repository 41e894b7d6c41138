/* The instrumented modules' mode, and the runtime following it.

   Every instrumented module calls __memprof_init (version, mode) from its
   constructor, before any of its code runs (abi.h).  The mode says which
   shadow layout its inline code writes: one 8-byte counter per 64 bytes,
   or (-fplugin-arg-memprof-histogram) one saturating byte per 8 bytes.
   Read in the other layout, those bytes are garbage (a 400-byte block
   with 3e15 accesses), so:

   - the first module sets the layout: the runtime switches to it, since
     no instrumented code has run yet and both layouts clear the same
     shadow bytes for a block (blocks are 64-byte aligned, the 8 bytes of
     a granule's counter are its 8 histogram bytes); a histogram= option
     that said otherwise is overridden, in one line;
   - a later module with the other layout is refused in one line: its
     code runs as built (the program's behaviour never changes), and the
     line says which module and what to rebuild;
   - access_sample_rate (which only the hooks of callback mode read) on a
     module that counts inline says, once, that it does nothing there.  */

#define _GNU_SOURCE
#include "internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Whether MEMPROF_OPTIONS set histogram= itself (not the default).  */
static bool histogram_option_given;

/* The first module's mode, or -1 before any module, and its file.  */
static _Atomic int established_mode = -1;
static char first_module[256];

static void
ignore_problem (void *cookie, const char *line)
{
  (void) cookie;
  (void) line;
}

/* Defined (weak) by units compiled with -flto and the plugin.  */
extern char __memprof_lto_unit __attribute__ ((weak));

/* See internal.h.  */
void
modes_check_at_exit (void)
{
  if (&__memprof_lto_unit != NULL && atomic_load (&established_mode) == -1)
    log_printf ("%s was compiled with -flto and -fplugin=memprof.so but "
                "linked without the plugin: with -flto the code is "
                "instrumented at link time, so nothing was, and the profile "
                "has no access counts; give the link command "
                "-fplugin=memprof.so and the same -fplugin-arg-memprof-... "
                "arguments",
                program_invocation_name);
}

/* See internal.h.  */
void
modes_start (const char *options_text)
{
  struct memprof_options probe;
  if (options_text == NULL)
    return;
  /* Parse again from the opposite default: histogram= was given when the
     result does not follow the default.  */
  options_set_defaults (&probe);
  probe.histogram = !probe.histogram;
  options_parse (&probe, options_text, "MEMPROF_OPTIONS", ignore_problem, NULL);
  histogram_option_given = probe.histogram == runtime_options.histogram;
}

/* The file of the module whose code is at ADDRESS, for the log.  */
static const char *
module_name (const void *address)
{
  Dl_info info;
  if (dladdr (address, &info) == 0 || info.dli_fname == NULL
      || info.dli_fname[0] == '\0')
    return "the program";
  return info.dli_fname;
}

static const char *
layout_name (bool histogram)
{
  return histogram ? "histogram mode (-fplugin-arg-memprof-histogram)"
                   : "counter mode (without -fplugin-arg-memprof-histogram)";
}

/* See internal.h.  */
void
modes_register (unsigned mode, const void *caller)
{
  static _Atomic bool sample_rate_reported, mix_reported;
  bool histogram = (mode & MEMPROF_MODE_HISTOGRAM) != 0;
  int expected = -1;

  if (atomic_compare_exchange_strong (&established_mode, &expected, (int) mode))
    {
      strncpy (first_module, module_name (caller), sizeof first_module - 1);
      if (histogram != runtime_histogram)
        {
          if (histogram_option_given)
            log_printf ("histogram=%d overridden: %s was built in %s, and the "
                        "runtime counts as it was built",
                        runtime_histogram ? 1 : 0, module_name (caller),
                        layout_name (histogram));
          runtime_histogram = histogram;
          runtime_options.histogram = histogram;
        }
    }
  else if (histogram != ((expected & MEMPROF_MODE_HISTOGRAM) != 0)
           && !atomic_exchange (&mix_reported, true))
    log_printf ("refused: %s was built in %s but %s, loaded first, in %s: "
                "modules of mixed modes are not supported and this run's "
                "access counts are not reliable; rebuild every module with "
                "the same -fplugin-arg-memprof-histogram",
                module_name (caller), layout_name (histogram), first_module,
                layout_name (runtime_histogram));

  if (!(mode & MEMPROF_MODE_CALLBACKS)
      && runtime_options.access_sample_rate != 1
      && !atomic_exchange (&sample_rate_reported, true))
    log_printf ("access_sample_rate=%ld does nothing for %s: it counts "
                "inline, and only code built with "
                "-fplugin-arg-memprof-callbacks samples accesses",
                runtime_options.access_sample_rate, module_name (caller));
}
