/* The runtime's side of direct allocation calls
   (-fplugin-arg-memprof-direct-allocations, gcc-plugin/direct_allocations.cc).

   Code built with that option decides at each malloc, calloc and realloc
   call whether sampling leaves the allocation out, with what malloc's own
   fast path decides from (abi.h, "Direct allocation calls"): the call
   site's byte, which this file sets only while the flags are
   UNSAMPLED_OPEN and after the census has been asked about the site, and
   the thread's countdown (allocator.c's sampling_thread, which the
   executable defines); it then calls glibc's __libc_malloc (calloc,
   realloc) itself and takes the countdown down by the bytes, as
   malloc_left_out_quickly would.  free and operator delete call
   __libc_free for a block that is not 64-byte aligned when their site's
   byte is set, which this file does only while UNSAMPLED_UNWATCHED holds.
   Every other case calls one of the entries below with the site's byte.
   They mark the byte and tail-call the interposed function, so that the
   caller the census and the capture see is the compiled code's call
   site, as if it had called malloc: what is sampled, its weight and its
   context are the interposed malloc's.

   The census: an allocation entry marks its byte before the tail call.
   The interposed malloc then finds the site in the thread's table (the
   census was asked) or asks the census itself.  Another thread that sees
   the byte meanwhile leaves its allocation out only when its countdown
   allows, as it would have after the census, which records one first
   allocation a site whichever thread makes it.

   Taking the bytes back: each marked byte is kept in a table, with the
   flags it needs; when the flags change (allocator_observers_changed:
   hooks, an events module, the trace, the runtime's start and end), the
   bytes whose flags no longer hold are cleared, under the same lock the
   marking takes, so no byte is marked from flags already gone.  A call
   that read its byte just before pays what the interposed malloc's read
   of the flag pays: it decides by the flags of that moment.  A site
   beyond the table's SITE_BYTES_MAX is never marked: it always calls the
   runtime.

   A program that defines its own malloc or operator delete (a custom
   allocator) gets no mark: every call goes to the entries, which call
   the program's function as the unmodified call would have.  */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>

#include "internal.h"

/* A free site's byte says that the block it frees is glibc's unless it
   has a header: the flags must hold (sampling makes no slots), and no
   slot of the runtime's may exist (made before, with sample_interval=1):
   FREE_NO_SLOTS stands for that in a byte's needs.  */
#define FREE_NO_SLOTS 0x80U
#define FREE_NEEDS (UNSAMPLED_OPEN | FREE_NO_SLOTS)

/* The flags with FREE_NO_SLOTS when there are no slots.  */
static unsigned char
flags_now (unsigned char value)
{
  /* With the small heap, no site decides alone: glibc's calls would take
     its blocks (free) and would not give them (malloc); every call goes
     to the interposed functions.  */
  if (value & UNSAMPLED_SMALL_HEAP)
    return 0;
  return value | (__memprof_slab_base == SLAB_UNRESERVED ? FREE_NO_SLOTS : 0);
}

/* The most call sites marked at once (each a byte of the program's).  */
#define SITE_BYTES_MAX 16384

static struct
{
  spinlock_t lock;
  unsigned count;
  unsigned char *bytes[SITE_BYTES_MAX];
  unsigned char needs[SITE_BYTES_MAX]; /* the flags each byte needs */
} site_bytes;

/* is_own's first answer for FUNCTION (dladdr), stored in *KNOWN.  */
static __attribute__ ((noinline, cold)) bool
learn_own (void *function, _Atomic signed char *known)
{
  Dl_info resolved, own;
  signed char answer = dladdr (function, &resolved)
                               && dladdr ((void *) learn_own, &own)
                               && resolved.dli_fbase == own.dli_fbase
                           ? 1
                           : -1;
  atomic_store_explicit (known, answer, memory_order_relaxed);
  return answer > 0;
}

/* Is FUNCTION, as the dynamic linker resolved it, in the runtime's
   module (not the program's replacement)?  Asked once a function: *KNOWN
   is 0 until then, then 1 (the runtime's) or -1.  */
static inline bool
is_own (void *function, _Atomic signed char *known)
{
  signed char answer = atomic_load_explicit (known, memory_order_relaxed);
  if (UNLIKELY (answer == 0))
    return learn_own (function, known);
  return answer > 0;
}

/* With the small heap no site is marked (flags_now): an entry whose
   function is known to be the runtime's own jumps straight to it (the
   hidden name, no PLT jump), without mark_site's checks; only loads,
   so that the entry saves no register.  The marked_ functions learn
   OWN (learn_own) the first time.  */
static inline bool
small_heap_way (const _Atomic signed char *own)
{
  return (atomic_load_explicit (&__memprof_unsampled_path, memory_order_relaxed)
          & UNSAMPLED_SMALL_HEAP)
         && atomic_load_explicit (own, memory_order_relaxed) > 0;
}

/* Learn OWN for FUNCTION, with the small heap, the first time.  */
static inline void
learn_small_heap_way (void *function, _Atomic signed char *own)
{
  if ((atomic_load_explicit (&__memprof_unsampled_path, memory_order_relaxed)
       & UNSAMPLED_SMALL_HEAP)
      && atomic_load_explicit (own, memory_order_relaxed) == 0)
    learn_own (function, own);
}

#define MARK_SITE(site_known, needs, function)                                 \
  do                                                                           \
    {                                                                          \
      static _Atomic signed char known;                                        \
      if (*(site_known) == 0)                                                  \
        mark_site (site_known, needs, (void *) (function), &known);            \
    }                                                                          \
  while (0)

/* Mark SITE_KNOWN, if the flags hold NEEDS and FUNCTION, the one the
   call would have called, is the runtime's own (KNOWN: is_own).  */
static void
mark_site (unsigned char *site_known, unsigned char needs, void *function,
           _Atomic signed char *known)
{
  /* Set already: a call the site's test sent here for another reason
     (a 64-byte aligned block, the countdown's end).  */
  if (*site_known != 0
      || (flags_now (atomic_load_explicit (&__memprof_unsampled_path,
                                           memory_order_relaxed))
          & needs)
             != needs
      || !is_own (function, known))
    return;
  spin_lock (&site_bytes.lock);
  if ((flags_now (atomic_load (&__memprof_unsampled_path)) & needs) == needs
      && *site_known == 0 && site_bytes.count < SITE_BYTES_MAX)
    {
      site_bytes.bytes[site_bytes.count] = site_known;
      site_bytes.needs[site_bytes.count] = needs;
      site_bytes.count++;
      *site_known = 1;
    }
  spin_unlock (&site_bytes.lock);
}

/* See internal.h.  */
void
direct_calls_observers_changed (unsigned char value)
{
  value = flags_now (value);
  spin_lock (&site_bytes.lock);
  unsigned kept = 0;
  for (unsigned i = 0; i < site_bytes.count; i++)
    if ((value & site_bytes.needs[i]) == site_bytes.needs[i])
      {
        site_bytes.bytes[kept] = site_bytes.bytes[i];
        site_bytes.needs[kept++] = site_bytes.needs[i];
      }
    else
      *site_bytes.bytes[i] = 0;
  site_bytes.count = kept;
  spin_unlock (&site_bytes.lock);
}

void operator_delete (void *) __asm__("_ZdlPv");
void operator_delete_sized (void *, size_t) __asm__("_ZdlPvm");
/* The same under new_delete.c's hidden names (no PLT jump).  */
extern void own_ZdlPv (void *) __attribute__ ((visibility ("hidden")));
extern void own_ZdlPvm (void *, size_t) __attribute__ ((visibility ("hidden")));

/* Tail calls only: no frame, so that the interposed function's caller is
   the compiled code's call site.  */
#define TAIL_CALLS_ONLY __attribute__ ((optimize ("omit-frame-pointer")))

/* The entries' ways without the small heap, out of line: the entries
   then save no register on the small heap's way.  Tail calls as well.  */
static __attribute__ ((noinline)) TAIL_CALLS_ONLY void *
marked_malloc (size_t size, unsigned char *site_known, _Atomic signed char *own)
{
  learn_small_heap_way ((void *) malloc, own);
  MARK_SITE (site_known, UNSAMPLED_OPEN, malloc);
  return malloc (size);
}

static __attribute__ ((noinline)) TAIL_CALLS_ONLY void *
marked_calloc (size_t count, size_t size, unsigned char *site_known,
               _Atomic signed char *own)
{
  learn_small_heap_way ((void *) calloc, own);
  MARK_SITE (site_known, UNSAMPLED_OPEN, calloc);
  return calloc (count, size);
}

static __attribute__ ((noinline)) TAIL_CALLS_ONLY void *
marked_realloc (void *pointer, size_t size, unsigned char *site_known,
                _Atomic signed char *own)
{
  learn_small_heap_way ((void *) realloc, own);
  MARK_SITE (site_known, UNSAMPLED_OPEN, realloc);
  return realloc (pointer, size);
}

static __attribute__ ((noinline)) TAIL_CALLS_ONLY void
marked_free (void *pointer, unsigned char *site_known, _Atomic signed char *own)
{
  learn_small_heap_way ((void *) free, own);
  MARK_SITE (site_known, FREE_NEEDS, free);
  free (pointer);
}

static __attribute__ ((noinline)) TAIL_CALLS_ONLY void
marked_delete (void *pointer, unsigned char *site_known,
               _Atomic signed char *own)
{
  learn_small_heap_way ((void *) operator_delete, own);
  MARK_SITE (site_known, FREE_NEEDS, operator_delete);
  operator_delete (pointer);
}

static __attribute__ ((noinline)) TAIL_CALLS_ONLY void
marked_delete_sized (void *pointer, size_t size, unsigned char *site_known,
                     _Atomic signed char *own)
{
  learn_small_heap_way ((void *) operator_delete_sized, own);
  MARK_SITE (site_known, FREE_NEEDS, operator_delete_sized);
  operator_delete_sized (pointer, size);
}

TAIL_CALLS_ONLY MEMPROF_EXPORT void *
__memprof_direct_malloc (size_t size, unsigned char *site_known)
{
  static _Atomic signed char own;
  if (LIKELY (small_heap_way (&own)))
    return allocator_malloc (size);
  return marked_malloc (size, site_known, &own);
}

TAIL_CALLS_ONLY MEMPROF_EXPORT void *
__memprof_direct_calloc (size_t count, size_t size, unsigned char *site_known)
{
  static _Atomic signed char own;
  if (LIKELY (small_heap_way (&own)))
    return allocator_calloc (count, size);
  return marked_calloc (count, size, site_known, &own);
}

TAIL_CALLS_ONLY MEMPROF_EXPORT void *
__memprof_direct_realloc (void *pointer, size_t size, unsigned char *site_known)
{
  static _Atomic signed char own;
  if (LIKELY (small_heap_way (&own)))
    return allocator_realloc (pointer, size);
  return marked_realloc (pointer, size, site_known, &own);
}

TAIL_CALLS_ONLY MEMPROF_EXPORT void
__memprof_direct_free (void *pointer, unsigned char *site_known)
{
  static _Atomic signed char own;
  if (LIKELY (small_heap_way (&own)))
    return allocator_free (pointer);
  marked_free (pointer, site_known, &own);
}

/* The deletes as free: with the small heap, the runtime's own operator
   (the program replaced neither form the call would reach: own_ZdlPvm
   still asks about operator delete (void *), as _ZdlPvm does).  */
TAIL_CALLS_ONLY MEMPROF_EXPORT void
__memprof_direct_delete (void *pointer, unsigned char *site_known)
{
  static _Atomic signed char own;
  if (LIKELY (small_heap_way (&own)))
    return own_ZdlPv (pointer);
  marked_delete (pointer, site_known, &own);
}

TAIL_CALLS_ONLY MEMPROF_EXPORT void
__memprof_direct_delete_sized (void *pointer, size_t size,
                               unsigned char *site_known)
{
  static _Atomic signed char own;
  if (LIKELY (small_heap_way (&own)))
    return own_ZdlPvm (pointer, size);
  marked_delete_sized (pointer, size, site_known, &own);
}
