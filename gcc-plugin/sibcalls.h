/* No sibling call where an allocation's context would lose a frame
   (sibcalls.cc).  */

#ifndef MEMPROF_PLUGIN_SIBCALLS_H
#define MEMPROF_PLUGIN_SIBCALLS_H

/* Clear the tail-call mark of the current function's calls that may
   allocate; returns how many were cleared.  */
unsigned keep_allocation_frames (void);

#endif /* MEMPROF_PLUGIN_SIBCALLS_H */
