/* Whether llvm-profdata can symbolize the profiles of this program, said
   once, in one line, when the first profile is written.

   llvm-profdata (RawMemProfReader) finds the profiled binary's segment in
   the profile by its GNU build ID and accepts exactly one executable
   segment: a program linked without a build ID, or with its code split
   over several executable PT_LOAD segments (a linker script, sections
   placed on their own), gets "no matching executable segments" or
   "expect only one executable load segment" there.  The line names the
   flags that fix it.  Checked on the main program only: it is the one
   --profiled-binary names, and its segments are those of the profile
   just written.  */

#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <link.h>
#include <stdatomic.h>

#include "rawformat.h"

/* dl_iterate_phdr gives the main program first: its load bias.  */
static int
main_program_bias (struct dl_phdr_info *info, size_t size, void *cookie)
{
  (void) size;
  *(uint64_t *) cookie = info->dlpi_addr;
  return 1;
}

/* See internal.h.  */
void
link_check (const struct memprof_raw_segment *segments, size_t count)
{
  static atomic_bool checked;
  uint64_t bias = 0;
  int executable_segments = 0;
  bool build_id = false;

  if (atomic_exchange (&checked, true))
    return;
  dl_iterate_phdr (main_program_bias, &bias);
  for (size_t i = 0; i < count; i++)
    if (segments[i].offset == bias)
      {
        executable_segments++;
        build_id |= segments[i].build_id_size > 0;
      }
  if (executable_segments == 0)
    return;
  if (!build_id)
    log_printf ("%s has no GNU build ID: llvm-profdata cannot symbolize its "
                "profile (it matches the binary by build ID); link with "
                "-Wl,--build-id",
                program_invocation_name);
  else if (executable_segments > 1)
    log_printf ("%s has %d executable segments: llvm-profdata cannot "
                "symbolize its profile (it reads one); link without what "
                "splits the code (a linker script, or "
                "-Wl,-z,noseparate-code)",
                program_invocation_name, executable_segments);
}
