/* What the fuzz targets share: the libFuzzer entry point's declaration,
   a failure that stops the run (a crash to libFuzzer), the checks every
   error message and every loaded profile must pass, and a scratch
   directory for the targets that need files.  Each target is one
   fuzz_NAME.c; docs/fuzzing.md says how they are built and run.  */

#ifndef MEMPROF_FUZZ_H
#define MEMPROF_FUZZ_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* A broken property: say which and abort, so that libFuzzer keeps the
   input as a crash (and the replay fails).  */
static void fuzz_fail (const char *format, ...)
    __attribute__ ((noreturn, format (printf, 1, 2)));

static void
fuzz_fail (const char *format, ...)
{
  va_list args;
  fputs ("fuzz: property broken: ", stderr);
  va_start (args, format);
  vfprintf (stderr, format, args);
  va_end (args);
  fputc ('\n', stderr);
  abort ();
}

/* A reader that failed must say so in a message that names the input
   (they all start with the name they were given).  */
static inline void
fuzz_check_error (const char *error, const char *name)
{
  if (strlen (error) == 0)
    fuzz_fail ("%s: a reader failed without a message", name);
  if (strstr (error, name) == NULL)
    fuzz_fail ("%s: the message \"%s\" does not name the input", name, error);
}

/* Every index of PROFILE within its arrays, and every value of every
   histogram read once (so that the sanitizers see an array shorter than
   its recorded size).  */
static inline void
fuzz_check_profile (const struct profile *profile)
{
  volatile uint64_t sum = 0;
  if (profile->string_count == 0 || profile->strings[0][0] != '\0')
    fuzz_fail ("string 0 is not the empty string");
  for (size_t i = 0; i < profile->string_count; i++)
    sum += strlen (profile->strings[i]);
  for (size_t i = 0; i < profile->module_count; i++)
    if (profile->modules[i].build_id_size > MEMPROF_RAW_BUILD_ID_MAX
        || profile->modules[i].path >= profile->string_count)
      fuzz_fail ("module %zu is out of bounds", i);
  if (profile->main_module != PROFILE_NO_MODULE
      && profile->main_module >= profile->module_count)
    fuzz_fail ("the main module %u is past the %zu modules",
               profile->main_module, profile->module_count);
  for (size_t i = 0; i < profile->frame_count; i++)
    if (profile->frames[i].function >= profile->string_count
        || profile->frames[i].file >= profile->string_count)
      fuzz_fail ("frame %zu names a string past the %zu strings", i,
                 profile->string_count);
  for (size_t i = 0; i < profile->location_count; i++)
    {
      const struct profile_location *location = &profile->locations[i];
      if (location->module != PROFILE_NO_MODULE
          && location->module >= profile->module_count)
        fuzz_fail ("location %zu: module %u is past the %zu modules", i,
                   location->module, profile->module_count);
      if (location->frame_count > 0
          && (uint64_t) location->first_frame + location->frame_count
                 > profile->frame_count)
        fuzz_fail ("location %zu: its frames are past the %zu frames", i,
                   profile->frame_count);
    }
  for (size_t i = 0; i < profile->context_count; i++)
    {
      const struct profile_context *context = &profile->contexts[i];
      if ((uint64_t) context->first_location + context->location_count
          > profile->context_location_count)
        fuzz_fail ("context %zu: its locations are past the list", i);
      const uint32_t *locations = profile_context_locations (profile, context);
      for (uint32_t j = 0; j < context->location_count; j++)
        if (locations[j] >= profile->location_count)
          fuzz_fail ("context %zu: location %u is past the %zu locations", i,
                     locations[j], profile->location_count);
      if (context->histogram == NULL)
        {
          if (context->mib.access_histogram_size != 0)
            fuzz_fail ("context %zu: histogram size %u without a histogram", i,
                       context->mib.access_histogram_size);
        }
      else
        for (uint32_t j = 0; j < context->mib.access_histogram_size; j++)
          sum += context->histogram[j];
    }
  (void) sum;
}

/* The path of FILE_NAME in a scratch directory of our own, made on first
   use under $TMPDIR (or /tmp) and removed at exit with the files named
   through here.  */
static char fuzz_directory[256];
static char fuzz_files[4][300];
static int fuzz_file_count;

static void
fuzz_remove_directory (void)
{
  for (int i = 0; i < fuzz_file_count; i++)
    unlink (fuzz_files[i]);
  rmdir (fuzz_directory);
}

static inline const char *
fuzz_scratch_file (const char *file_name)
{
  if (fuzz_directory[0] == '\0')
    {
      const char *tmp = getenv ("TMPDIR");
      snprintf (fuzz_directory, sizeof fuzz_directory, "%s/memprof-fuzz.XXXXXX",
                tmp && *tmp ? tmp : "/tmp");
      if (mkdtemp (fuzz_directory) == NULL)
        {
          perror (fuzz_directory);
          exit (1);
        }
      atexit (fuzz_remove_directory);
    }
  char path[sizeof fuzz_files[0]];
  snprintf (path, sizeof path, "%s/%s", fuzz_directory, file_name);
  for (int i = 0; i < fuzz_file_count; i++)
    if (strcmp (fuzz_files[i], path) == 0)
      return fuzz_files[i];
  if (fuzz_file_count == (int) (sizeof fuzz_files / sizeof fuzz_files[0]))
    fuzz_fail ("more than %d scratch files", fuzz_file_count);
  strcpy (fuzz_files[fuzz_file_count], path);
  return fuzz_files[fuzz_file_count++];
}

#endif /* MEMPROF_FUZZ_H */
