/* The public API of libmemprof, for programs that want to control their
   own profiling.  Link with `pkg-config --libs memprof`.  Every function
   is safe to call from any thread; none of them may be called from a
   signal handler.  */

#ifndef MEMPROF_INTERFACE_H
#define MEMPROF_INTERFACE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Write a complete profile now, as the runtime does at exit: every
   allocation freed so far, plus every allocation live at this moment
   (folded into a copy, so it is not counted twice when it is freed later).
   The file is named by the profile_file option; without %n in it, each
   dump replaces the previous file (atomically, by rename).  Its side
   file, NAME.extra, is written with it (unless write_extra=0).
   Returns 0 on success, -1 if the profile could not be written (the
   reason is printed once on the runtime's log).  */
int memprof_dump (void);

/* Forget every allocation context recorded so far (allocations freed
   before this call).  Allocations live now are still recorded when they
   are freed.  */
void memprof_reset (void);

/* Set one option as MEMPROF_OPTIONS would ("key=value").  Returns 0 on
   success, -1 (with a line on the runtime's log) when the key is unknown
   or the value is bad, in which case nothing changes.  Options that only
   matter at start-up (histogram) keep their start-up value.  */
int memprof_set_option (const char *key_equals_value);

/* Copy the current value of option NAME, as text, into BUF (at most SIZE
   bytes, always NUL-terminated when SIZE > 0).  Returns the length of the
   full value, or -1 when NAME is not an option.  */
int memprof_get_option (const char *name, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* MEMPROF_INTERFACE_H */
