/* The event queue of profiling modules (events.c), as the allocator's
   entry points call it: one predictable branch when no module wants
   allocation events.  */

#ifndef MEMPROF_EVENTS_H
#define MEMPROF_EVENTS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* True while a module wants allocation events.  */
extern _Atomic bool events_want_allocations;

/* An allocation of SIZE bytes at POINTER (not null) in CONTEXT (the
   stack id, 0 when not recorded), called from CALL_SITE (a return
   address); its callers test events_allocations_wanted first.  */
void events_record_allocation (uint64_t pointer, uint64_t size,
                               uint64_t context, uint64_t call_site);
void events_record_free (uint64_t pointer);

/* Whether a module wants allocation events now.  A caller whose event
   arguments cost a load (the context's id: a line of the context record
   the allocation does not touch otherwise) tests this first: the
   compiler does not move a load below the atomic one.  */
static inline bool
events_allocations_wanted (void)
{
  return __builtin_expect (
      atomic_load_explicit (&events_want_allocations, memory_order_relaxed), 0);
}

/* Before the free of POINTER (not null).  */
static inline void
events_before_free (const void *pointer)
{
  if (__builtin_expect (
          atomic_load_explicit (&events_want_allocations, memory_order_relaxed),
          0))
    events_record_free ((uintptr_t) pointer);
}

#endif /* MEMPROF_EVENTS_H */
