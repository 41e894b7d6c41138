/* memprof show --globals: the program's global and static variables,
   ranked by accesses per byte, the never-accessed ones flagged.  */

#ifndef MEMPROF_ANALYSIS_SHOW_GLOBALS_H
#define MEMPROF_ANALYSIS_SHOW_GLOBALS_H

#include <stdbool.h>

#include "session.h"

/* Print the globals of SESSION's profile (loaded and symbolized): as JSON
   when JSON, else as a table; at most TOP of them (0: all).  */
void show_globals (struct session *session, bool json, long top);

#endif /* MEMPROF_ANALYSIS_SHOW_GLOBALS_H */
