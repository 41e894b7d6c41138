/* The shared libraries a program loads, as the dynamic linker finds
   them.  */

#ifndef MEMPROF_ANALYSIS_LIBRARIES_H
#define MEMPROF_ANALYSIS_LIBRARIES_H

#include <stddef.h>

/* The paths of the libraries PROGRAM needs, directly or through other
   libraries, that exist on this machine, into *PATHS (the caller frees
   each and the array).  Returns how many.  */
size_t libraries_of (const char *program, char ***paths);

#endif /* MEMPROF_ANALYSIS_LIBRARIES_H */
