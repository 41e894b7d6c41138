/* --focus, --ignore and --suppressions, as pprof names the first two:
   keep only the contexts one of whose frames matches a --focus regular
   expression, and drop those one of whose frames matches an --ignore one
   or a line of a suppressions file.  A frame matches when its function
   (demangled or linkage name) or its source file does; the expressions
   are POSIX extended ones, unanchored.  */

#ifndef MEMPROF_ANALYSIS_PATTERNS_H
#define MEMPROF_ANALYSIS_PATTERNS_H

#include <stdbool.h>

#include "session.h"

/* Handle ARGV[*INDEX] when it is --focus[=]REGEX, --ignore[=]REGEX or
   --suppressions[=]FILE; advance *INDEX past it.  A bad expression or an
   unreadable file: a message naming it (and the line), exit status 2.  */
bool patterns_option (struct session_patterns *patterns, int argc, char **argv,
                      int *index);

/* Keep only the contexts of SESSION's profile that PATTERNS let through
   (all of them when there are none).  */
void patterns_apply (const struct session_patterns *patterns,
                     struct session *session);

void patterns_free (struct session_patterns *patterns);

#endif /* MEMPROF_ANALYSIS_PATTERNS_H */
