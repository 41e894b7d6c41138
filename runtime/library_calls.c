/* The entries the plugin calls instead of the C library's mem* and str*
   functions in instrumented code (gcc-plugin/library_calls.cc), as the
   static runtime has them: it intercepts nothing (only libmemprof.so
   counts library calls, interceptors.c), so each calls the function as
   the calling module binds it (passed by the call: the C library's, or
   the program's own) and counts nothing.  Weak: interceptors.c's counting entries
   take their place in libmemprof.so.  */

#include "internal.h"

#include <stddef.h>

__attribute__ ((weak)) MEMPROF_EXPORT int
__memprof_memcmp (const void *a, const void *b, size_t size,
                  int (*program_memcmp) (const void *, const void *, size_t))
{
  return program_memcmp (a, b, size);
}

__attribute__ ((weak)) MEMPROF_EXPORT size_t
__memprof_strlen (const char *text, size_t (*program_strlen) (const char *))
{
  return program_strlen (text);
}

__attribute__ ((weak)) MEMPROF_EXPORT int
__memprof_strcmp (const char *a, const char *b,
                  int (*program_strcmp) (const char *, const char *))
{
  return program_strcmp (a, b);
}

__attribute__ ((weak)) MEMPROF_EXPORT int
__memprof_strncmp (const char *a, const char *b, size_t limit,
                   int (*program_strncmp) (const char *, const char *, size_t))
{
  return program_strncmp (a, b, limit);
}
