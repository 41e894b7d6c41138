/* The runtime's side of direct allocation calls
   (-fplugin-arg-memprof-direct-allocations, gcc-plugin/direct_allocations.cc).

   Code built with that option decides at each malloc, calloc and realloc
   call whether sampling leaves the allocation out, with what malloc's own
   fast path reads (abi.h): the flag byte __memprof_unsampled_path, the
   call site's byte (the census has seen the site) and the thread's
   countdown __memprof_sampling_countdown; it then calls glibc's
   __libc_malloc (calloc, realloc) itself and takes the countdown down by
   the bytes, as malloc_left_out_quickly would.  Every other case calls one
   of the entry points below with the site's byte.  They set the byte and
   tail-call the interposed function, so that the site the census and the
   capture see is the instrumented code's return address, as if it had
   called malloc: what is sampled, its weight and its context are the
   interposed malloc's.

   The byte is set only while the fast path is open (no hooks, events or
   trace; sampling on): then the interposed function either finds the site
   in the thread's table (the census was asked) or asks the census itself
   before it returns.  Another thread that finds the byte set meanwhile
   leaves its allocation out only when its countdown allows, as it would
   have after the census, which records one first allocation a site
   whichever thread makes it.  */

#include <stddef.h>
#include <stdlib.h>

#include "internal.h"

_Static_assert(UNSAMPLED_OPEN == MEMPROF_UNSAMPLED_OPEN
                   && UNSAMPLED_UNWATCHED == MEMPROF_UNSAMPLED_UNWATCHED,
               "abi.h's flag bits are allocator.c's");

/* Tail calls only: no frame, so that the interposed function's caller is
   the instrumented code's call site.  */
#define TAIL_CALLS_ONLY __attribute__ ((optimize ("omit-frame-pointer")))

static inline void
note_site (unsigned char *site_known)
{
  if (atomic_load_explicit (&__memprof_unsampled_path, memory_order_relaxed)
      == UNSAMPLED_OPEN)
    *site_known = 1;
}

TAIL_CALLS_ONLY MEMPROF_EXPORT void *
__memprof_direct_malloc (size_t size, unsigned char *site_known)
{
  note_site (site_known);
  return malloc (size);
}

TAIL_CALLS_ONLY MEMPROF_EXPORT void *
__memprof_direct_calloc (size_t count, size_t size, unsigned char *site_known)
{
  note_site (site_known);
  return calloc (count, size);
}

TAIL_CALLS_ONLY MEMPROF_EXPORT void *
__memprof_direct_realloc (void *pointer, size_t size, unsigned char *site_known)
{
  note_site (site_known);
  return realloc (pointer, size);
}
