/* Where an allocation comes from: the user's own code or the system (the
   C and C++ runtimes, system libraries, start-up), and whether every
   access to it could be counted.  Tables show a context at its first
   frame in the user's code; findings about what the system allocates for
   itself are left out unless asked for; and contexts can be kept or
   dropped by regular expressions, as pprof's --focus and --ignore do.
   docs/analysis.md, "What is left out and why", says the rules.  */

#ifndef MEMPROF_ANALYSIS_ORIGIN_H
#define MEMPROF_ANALYSIS_ORIGIN_H

#include <stdbool.h>
#include <stdint.h>

#include "profile.h"

/* The system allocated it for its own use: no frame of its stack is in
   the user's code (start-up, exit, a library's initializers), or the C
   library allocated it under a call that does not hand the memory to its
   caller (stdio buffers, locales).  Its findings are hidden by default.  */
#define CONTEXT_FROM_SYSTEM 1u
/* Its allocation was called from code outside the user's modules (a
   system library, which the plugin did not instrument): accesses to it
   can come from code that counts nothing, so a count of 0 or an
   untouched byte does not mean unused.  */
#define CONTEXT_UNCOUNTED_CALLER 2u

/* Is MODULE the user's: the program, or a library outside the system's
   library directories?  A library whose file is not known (the profile
   was not symbolized with it) is not.  */
bool origin_module_is_user (const struct profile *profile, uint32_t module);

/* Is FILE (a source file of a frame) a system header: the C++ library's,
   the C library's, GCC's?  Frames inlined from them are not the user's.  */
bool origin_file_is_system (const char *file);

/* The name of MODULE's file without its directory ("libc.so.6"), or NULL
   when the profile has no file for it.  */
const char *origin_module_file_name (const struct profile *profile,
                                     uint32_t module);

/* Set the origin of every context of PROFILE (once its modules have
   their files and its locations their frames).  IS_RUNTIME tells the
   locations of the profiler's own runtime, which are not the
   allocation's caller (LEAF: the first location of the stack).  */
void origin_mark (struct profile *profile,
                  bool (*is_runtime) (const struct profile *profile,
                                      uint32_t location, bool leaf));

#endif /* MEMPROF_ANALYSIS_ORIGIN_H */
