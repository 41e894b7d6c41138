/* The programs' global variables in the profile model (profile.h): the
   accesses per 64-byte granule of a module's data that the runtime's side
   files count (version 2), summed by address whatever the order of the
   profiles, and the module's data symbols once it is symbolized
   (datasymbols.h); and the rule that gives each global its accesses.

   The rule (docs/profile-format.md, "Globals"): a granule that holds bytes
   of one global only (or of symbols with the same bytes: aliases) counts
   for that global whole.  A granule shared by several globals is split
   between them in proportion to the bytes each has in it, each weighted by
   its density: the accesses per byte of its bytes that no other global
   shares (in granules that only it holds, or that no access reached); a
   global with no such byte (small globals packed together) takes the
   granule's mean density, so that globals that are all small share by
   bytes alone, and when every weight is 0 the split is by bytes.  Shares
   are rounded up.  So a cold array next to a hot one keeps its 0 although
   the two share a granule, and a hot array gets the granule's accesses.
   Bytes no global holds (padding) take no share; their accesses are
   reported apart.  */

#ifndef MEMPROF_ANALYSIS_GLOBALS_H
#define MEMPROF_ANALYSIS_GLOBALS_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

/* The bytes of memory one granule record counts.  */
#define PROFILE_GRANULE_SIZE 64

/* Add ACCESSES to the granule at ADDRESS (module-relative, a multiple of
   64) of MODULE.  */
void profile_add_granule (struct profile *profile, uint32_t module,
                          uint64_t address, uint64_t accesses);

/* Add GLOBAL to the module's globals unless an equal one (every field) is
   there; returns its index.  */
uint32_t profile_add_global (struct profile *profile,
                             const struct profile_global *global);

/* The accesses of every global of PROFILE, by the rule above, into
   ACCESSES (profile->global_count values).  Returns the accesses of the
   granules, in modules that have globals, that no global has a byte in
   (padding, symbols without a size).  */
uint64_t profile_global_accesses (const struct profile *profile,
                                  uint64_t *accesses);

/* Does MODULE have globals?  */
bool profile_module_has_globals (const struct profile *profile,
                                 uint32_t module);

#endif /* MEMPROF_ANALYSIS_GLOBALS_H */
