/* Library calls of instrumented code counted without the interposer's
   caller check (library_calls.cc).  */

#ifndef MEMPROF_PLUGIN_LIBRARY_CALLS_H
#define MEMPROF_PLUGIN_LIBRARY_CALLS_H

extern const struct ggc_root_tab library_calls_roots[];

/* Turn the current function's calls of memcmp and strlen that stay
   calls of the C library's into calls of the runtime's __memprof_memcmp
   and __memprof_strlen (said in the dump); returns how many.  */
unsigned redirect_library_calls (void);

#endif /* MEMPROF_PLUGIN_LIBRARY_CALLS_H */
