/* The allocation path's clock reading, inline in its callers (slab.c,
   allocator.c): an rdtsc converted through the anchor (clock.c) when the
   anchor covers it, clock.c's clock_stamp_slow otherwise.  A call made
   the caller save its registers around it and return the three values
   packed: with the checks one comparison now replaces, about 20
   instructions a reading (binary_trees, callgrind).  */

#ifndef MEMPROF_RUNTIME_CLOCK_H
#define MEMPROF_RUNTIME_CLOCK_H

#include <x86intrin.h>

#include "internal.h"

/* The anchor (clock.c): a TSC value, the CLOCK_MONOTONIC time at it,
   nanoseconds per tick in 32.32 fixed point, and the ticks it converts
   for, read under the sequence counter.  ticks_life stays 0 until a rate
   is measured, and is never set when the TSC is not usable: then no
   reading is covered, and every one takes the slow path.  */
struct clock_anchor
{
  _Atomic uint32_t sequence;
  _Atomic uint64_t tsc, ns, rate, ticks_life;
} __attribute__ ((aligned (64)));
extern struct clock_anchor clock_anchor;

/* A hold is open on this thread (clock_hold_begin).  */
extern __thread bool clock_hold_open
    __attribute__ ((tls_model ("initial-exec")));

/* clock_stamp when the inline path cannot read: in a hold, with the
   ticker, before the first rate, without a usable TSC, with the anchor
   too old or being renewed.  */
struct clock_stamp clock_stamp_slow (void);

/* The anchor as one consistent copy; false when it was being renewed.  */
struct anchor
{
  uint64_t tsc, ns, rate, ticks_life;
};

static inline __attribute__ ((always_inline)) bool
anchor_read_sequence (struct anchor *anchor, uint32_t sequence)
{
  anchor->tsc = atomic_load_explicit (&clock_anchor.tsc, memory_order_relaxed);
  anchor->ns = atomic_load_explicit (&clock_anchor.ns, memory_order_relaxed);
  anchor->rate
      = atomic_load_explicit (&clock_anchor.rate, memory_order_relaxed);
  anchor->ticks_life
      = atomic_load_explicit (&clock_anchor.ticks_life, memory_order_relaxed);
  atomic_thread_fence (memory_order_acquire);
  return !(sequence & 1)
         && atomic_load_explicit (&clock_anchor.sequence, memory_order_relaxed)
                == sequence;
}

/* The anchor as one consistent copy; false when it was being renewed.  */
static inline __attribute__ ((always_inline)) bool
anchor_read (struct anchor *anchor)
{
  return anchor_read_sequence (
      anchor,
      atomic_load_explicit (&clock_anchor.sequence, memory_order_acquire));
}

/* The millisecond of this thread's last reading through the anchor: the
   TSC values from tsc_low on, for tsc_span ticks, convert to a time in
   the millisecond MS (CLOCK_MONOTONIC's, clock_start_ms not taken off)
   through the anchor of sequence SEQUENCE, and are covered by it
   (clock_ms_span_set, clock.c).  A reading in the span takes its
   milliseconds without the anchor's four fields, the conversion's two
   multiplications and the division by 10^6 (a chain of about 10
   cycles after the rdtsc).  tsc_span 0: none.  GENERATION is odd while
   clock_ms_span_set writes: a signal handler's allocation may set the
   span between two of the fields' loads of the code it interrupted,
   which then sees the generation moved and converts through the anchor
   instead (the slow way if the handler renewed it).  */
struct clock_ms_span
{
  uint64_t tsc_low, tsc_span, ms;
  uint32_t sequence, generation;
};
extern __thread struct clock_ms_span clock_ms_span
    __attribute__ ((tls_model ("initial-exec")));

/* The span of TSC's millisecond, converted through ANCHOR (of SEQUENCE,
   which covers TSC) to NS.  */
void clock_ms_span_set (const struct anchor *anchor, uint32_t sequence,
                        uint64_t tsc, uint64_t ns);

/* Whether the consistent ANCHOR converts TSC: one unsigned comparison.  A
   TSC before the anchor wraps to a difference above ticks_life, and
   ticks_life is 0 while the TSC is unknown, unusable or not measured.  */
static inline __attribute__ ((always_inline)) bool
anchor_covers (const struct anchor *anchor, uint64_t tsc)
{
  return tsc - anchor->tsc < anchor->ticks_life;
}

/* CLOCK_MONOTONIC at TSC, which ANCHOR covers (never negative).  */
static inline __attribute__ ((always_inline)) uint64_t
anchor_convert (const struct anchor *anchor, uint64_t tsc)
{
  return anchor->ns
         + (uint64_t) (((unsigned __int128) (tsc - anchor->tsc) * anchor->rate)
                       >> 32);
}

/* The TSC for clock_stamp_at, read as early as the caller can: an rdtsc
   takes about 9.5 ns here, and its result used at once (the conversion
   below) stalled the path behind it (40 % of slab_free's samples right
   after it); read before the stack capture or the list work, its
   latency overlaps theirs.  0 when clock_stamp_at will read the slow
   way (a hold, the ticker): no rdtsc there.  */
static inline __attribute__ ((always_inline)) uint64_t
clock_early_tsc (void)
{
  if (UNLIKELY (clock_hold_open || runtime_options.clock_ticker))
    return 0;
  return __rdtsc ();
}

/* runtime_now_ms, clock_reading_tsc and runtime_current_cpu of the
   moment TSC was read (clock_early_tsc, in the same call of the
   allocator: a moment of it as any other).  */
static inline __attribute__ ((always_inline)) struct clock_stamp
clock_stamp_at (uint64_t tsc)
{
  struct clock_stamp stamp;

  if (UNLIKELY (tsc == 0))
    return clock_stamp_slow ();
  uint32_t sequence
      = atomic_load_explicit (&clock_anchor.sequence, memory_order_acquire);
  /* The anchor of an even sequence is the one the span was made with (a
     renewal moves the sequence twice).  */
  uint32_t generation = clock_ms_span.generation;
  atomic_signal_fence (memory_order_seq_cst);
  uint64_t ms = clock_ms_span.ms;
  bool in_span = sequence == clock_ms_span.sequence
                 && tsc - clock_ms_span.tsc_low < clock_ms_span.tsc_span;
  atomic_signal_fence (memory_order_seq_cst);
  if (LIKELY (in_span && generation == clock_ms_span.generation
              && !(generation & 1)))
    {
      clock_last_tsc = tsc;
      stamp.ms = (uint32_t) (ms - (uint64_t) clock_start_ms);
      stamp.tsc = tsc;
      stamp.cpu = runtime_current_cpu ();
      return stamp;
    }
  struct anchor anchor;
  if (UNLIKELY (!anchor_read_sequence (&anchor, sequence)
                || !anchor_covers (&anchor, tsc)))
    return clock_stamp_slow ();
  clock_last_tsc = tsc;
  /* CLOCK_MONOTONIC is never negative: an unsigned division by 10^6 is
     a multiplication and a shift.  */
  uint64_t ns = anchor_convert (&anchor, tsc);
  clock_ms_span_set (&anchor, sequence, tsc, ns);
  stamp.ms = (uint32_t) (ns / 1000000 - (uint64_t) clock_start_ms);
  stamp.tsc = tsc;
  stamp.cpu = runtime_current_cpu ();
  return stamp;
}

/* runtime_now_ms, clock_reading_tsc and runtime_current_cpu of one
   moment.  */
static inline __attribute__ ((always_inline)) struct clock_stamp
clock_stamp (void)
{
  return clock_stamp_at (clock_early_tsc ());
}

#endif
