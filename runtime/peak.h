/* The peak's bookkeeping on the allocator's path (peak.c has the rest):
   what every recorded allocation and free does, inline in the allocator,
   while the process has one thread and nothing is due.

   The common case costs a few plain loads and stores: the event's time
   is compared with one deadline (the timeline's next sample; for a free,
   also the breakdown's copy once armed), the context's and the process's
   live counts are updated, and an allocation compares the live bytes
   with one watermark (the peak, or lower while a copy waits for the heap
   to come back near it).  Anything else -- a second thread, a sample or
   a copy due, a context not yet listed, a watermark crossed beyond a
   new peak -- goes to peak.c's out-of-line paths, which keep the
   deadlines and the watermark up to date.  */

#ifndef MEMPROF_RUNTIME_PEAK_H
#define MEMPROF_RUNTIME_PEAK_H

#include <sys/single_threaded.h>

/* What the inline paths read and write, hottest first.  Plain loads and
   stores (relaxed atomics: a dump from a signal handler may read them)
   while the process has one thread; peak.c's threaded path uses atomic
   adds on live_bytes and peak_bytes.  */
struct peak_hot
{
  _Atomic bool enabled;             /* peak=1 */
  _Atomic uint64_t alloc_check_tsc; /* an allocation at or after: peak.c */
  _Atomic uint64_t free_check_tsc;  /* a free at or after: peak.c */
  _Atomic uint64_t last_event_tsc;  /* of the last allocation or free */
  _Atomic int64_t live_bytes;       /* of the recorded blocks */
  _Atomic int64_t live_records;     /* blocks recorded live, counting */
  _Atomic int64_t watch_bytes;      /* live above it: peak_crossed */
  _Atomic int64_t peak_bytes;       /* the high-water mark */
  /* Second line: at new peaks.  */
  _Atomic uint64_t peak_tsc; /* when it was reached */
  _Atomic int64_t arm_bytes; /* a new peak above it: peak_crossed */
} __attribute__ ((aligned (64)));
extern struct peak_hot peak_hot;

void peak_allocation_slow (struct depot_context *context, uint64_t size,
                           uint32_t weight, uint64_t tsc);
void peak_free_slow (struct depot_context *context, uint64_t size,
                     uint32_t weight, uint64_t tsc);
void peak_crossed (int64_t live, uint64_t tsc);

/* *COUNTER + DELTA, stored and returned, where no other thread can race
   (a plain load and store: no locked instruction).  */
static inline int64_t
peak_add_alone (_Atomic int64_t *counter, int64_t delta)
{
  int64_t sum = atomic_load_explicit (counter, memory_order_relaxed) + delta;
  atomic_store_explicit (counter, sum, memory_order_relaxed);
  return sum;
}

/* A recorded block of SIZE bytes standing for WEIGHT allocations of
   CONTEXT was allocated at TSC (the time stamp counter:
   clock_reading_tsc after the allocator's reading).  */
static inline void
peak_note_allocation (struct depot_context *context, uint64_t size,
                      uint32_t weight, uint64_t tsc)
{
  if (!atomic_load_explicit (&peak_hot.enabled, memory_order_relaxed))
    return;
  if (UNLIKELY (!__libc_single_threaded
                || tsc >= atomic_load_explicit (&peak_hot.alloc_check_tsc,
                                                memory_order_relaxed)
                || !atomic_load_explicit (&context->peak.listed,
                                          memory_order_relaxed)))
    {
      peak_allocation_slow (context, size, weight, tsc);
      return;
    }
  int64_t bytes = (int64_t) (size * weight);
  atomic_store_explicit (&peak_hot.last_event_tsc, tsc, memory_order_relaxed);
  peak_add_alone (&context->peak.live_bytes, bytes);
  peak_add_alone (&context->peak.live_blocks, (int64_t) weight);
  peak_add_alone (&peak_hot.live_records, 1);
  int64_t live = peak_add_alone (&peak_hot.live_bytes, bytes);
  if (UNLIKELY (live > atomic_load_explicit (&peak_hot.watch_bytes,
                                             memory_order_relaxed)))
    {
      /* A new peak: inline, for a program that grows.  */
      if (live > atomic_load_explicit (&peak_hot.peak_bytes,
                                       memory_order_relaxed)
          && live <= atomic_load_explicit (&peak_hot.arm_bytes,
                                           memory_order_relaxed))
        {
          atomic_store_explicit (&peak_hot.peak_bytes, live,
                                 memory_order_relaxed);
          atomic_store_explicit (&peak_hot.watch_bytes, live,
                                 memory_order_relaxed);
          atomic_store_explicit (&peak_hot.peak_tsc, tsc, memory_order_relaxed);
        }
      else
        peak_crossed (live, tsc);
    }
}

/* A recorded block as above is about to be freed at TSC.  */
static inline void
peak_note_free (struct depot_context *context, uint64_t size, uint32_t weight,
                uint64_t tsc)
{
  if (!atomic_load_explicit (&peak_hot.enabled, memory_order_relaxed))
    return;
  if (UNLIKELY (!__libc_single_threaded
                || tsc >= atomic_load_explicit (&peak_hot.free_check_tsc,
                                                memory_order_relaxed)))
    {
      peak_free_slow (context, size, weight, tsc);
      return;
    }
  int64_t bytes = (int64_t) (size * weight);
  atomic_store_explicit (&peak_hot.last_event_tsc, tsc, memory_order_relaxed);
  peak_add_alone (&context->peak.live_bytes, -bytes);
  peak_add_alone (&context->peak.live_blocks, -(int64_t) weight);
  peak_add_alone (&peak_hot.live_records, -1);
  peak_add_alone (&peak_hot.live_bytes, -bytes);
}

#endif
