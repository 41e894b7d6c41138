/* The names LLVM's MemProf runtime gives its API (sanitizer/
   memprof_interface.h), so that code written for clang's runtime builds
   against this one unchanged.  Each is ours under another name:

     __memprof_profile_dump ()     memprof_dump ()
     __memprof_profile_reset ()    memprof_reset ()
     __memprof_profile_filename    the default of profile_file (when not
                                   empty; compiled_options.c)

   LLVM's __memprof_profile_reset only closes the output file so that the
   next dump opens it again; ours does that for the log (log_reopen) and
   also forgets the records, as memprof_reset () documents.  */

#include "internal.h"
#include "memprof/interface.h"

/* Weak: the program's own definition (clang emits one for
   -fmemory-profile=PATH) takes its place.  */
MEMPROF_EXPORT __attribute__ ((weak)) char __memprof_profile_filename[1];

MEMPROF_EXPORT int
__memprof_profile_dump (void)
{
  return memprof_dump ();
}

MEMPROF_EXPORT void
__memprof_profile_reset (void)
{
  memprof_reset ();
}
