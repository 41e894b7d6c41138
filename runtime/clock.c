/* The runtime's clock: CLOCK_MONOTONIC, as the MIBs' timestamps have
   always been, read through the time-stamp counter where that is safe.
   Two timestamps per allocation made clock_gettime the largest single
   cost of the allocation path (it costs three times an rdtsc here).

   The TSC is used only when it is invariant (CPUID 0x80000007, EDX bit
   8) and the kernel keeps time with it (its clocksource is "tsc"), so it
   runs at one rate on every CPU.  A reading is converted with an anchor
   (a TSC value, the CLOCK_MONOTONIC time at it, nanoseconds per tick)
   that is renewed from clock_gettime every ANCHOR_LIFE_NS: the rate is
   measured over the last anchor's life, so NTP's slewing is followed and
   a reading is off by at most the drift over one anchor life (100 ppm of
   100 ms: 10 us), far below the milliseconds the profile keeps.  Until the
   first rate is known, and whenever the TSC is not usable, every reading
   is a clock_gettime.  The anchor is read under a sequence counter, so a
   reader never blocks; one thread at a time renews it.

   The allocation path reads through clock_stamp (milliseconds, TSC and
   CPU in one call); realloc's allocation and free share one reading
   through a hold (clock_hold_begin, docs/internals.md "The clock").  */

#define _GNU_SOURCE
#include <cpuid.h>
#include <fcntl.h>
#include <stddef.h>
#include <sys/rseq.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "clock.h"
#include "internal.h"

#define ANCHOR_LIFE_NS 100000000LL
/* The most TSC ticks around the clock_gettime an anchor is made of (a
   clock_gettime takes about 300), and how often it is tried.  */
#define ANCHOR_READ_TICKS_MAX 5000
#define ANCHOR_ATTEMPTS 3
/* The shortest interval a rate is measured over.  */
#define RATE_INTERVAL_NS 10000000LL

static _Atomic int tsc_state; /* 0 unknown, 1 usable, 2 not usable */
/* The anchor (clock.h); its rate is 0 until measured.  */
struct clock_anchor clock_anchor;
static spinlock_t anchor_lock = SPINLOCK_INIT;

static int64_t
monotonic_ns (void)
{
  struct timespec now;
  clock_gettime (CLOCK_MONOTONIC, &now);
  return (int64_t) now.tv_sec * 1000000000LL + now.tv_nsec;
}

static bool
tsc_is_usable (void)
{
  unsigned eax, ebx, ecx, edx;
  char source[16] = "";
  int fd;

  if (!__get_cpuid (0x80000007, &eax, &ebx, &ecx, &edx) || !(edx & (1U << 8)))
    return false;
  fd = open ("/sys/devices/system/clocksource/clocksource0/"
             "current_clocksource",
             O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  ssize_t length = read (fd, source, sizeof source - 1);
  close (fd);
  return length == 4 && memcmp (source, "tsc\n", 4) == 0;
}

/* A new anchor at TSC, NS; the rate from the old anchor when it is old
   enough to measure one.  Skipped when another thread is renewing.  */
static void
renew_anchor (uint64_t tsc, int64_t ns)
{
  if (atomic_flag_test_and_set_explicit (&anchor_lock.flag,
                                         memory_order_acquire))
    return;
  uint64_t old_tsc
      = atomic_load_explicit (&clock_anchor.tsc, memory_order_relaxed);
  int64_t old_ns
      = (int64_t) atomic_load_explicit (&clock_anchor.ns, memory_order_relaxed);
  uint64_t rate
      = atomic_load_explicit (&clock_anchor.rate, memory_order_relaxed);
  if (old_tsc != 0 && tsc > old_tsc && ns - old_ns >= RATE_INTERVAL_NS)
    rate = (uint64_t) ((((unsigned __int128) (ns - old_ns)) << 32)
                       / (tsc - old_tsc));
  else if (old_tsc != 0 && tsc > old_tsc)
    {
      /* Too soon to measure a rate: keep the anchor it will be measured
         from.  */
      atomic_flag_clear_explicit (&anchor_lock.flag, memory_order_release);
      return;
    }
  atomic_fetch_add_explicit (&clock_anchor.sequence, 1, memory_order_acq_rel);
  atomic_thread_fence (memory_order_release);
  atomic_store_explicit (&clock_anchor.tsc, tsc, memory_order_relaxed);
  atomic_store_explicit (&clock_anchor.ns, (uint64_t) ns, memory_order_relaxed);
  atomic_store_explicit (&clock_anchor.rate, rate, memory_order_relaxed);
  atomic_store_explicit (
      &clock_anchor.ticks_life,
      rate ? (uint64_t) (((unsigned __int128) ANCHOR_LIFE_NS << 32) / rate) : 0,
      memory_order_relaxed);
  atomic_fetch_add_explicit (&clock_anchor.sequence, 1, memory_order_release);
  atomic_flag_clear_explicit (&anchor_lock.flag, memory_order_release);
}

__thread uint64_t clock_last_tsc __attribute__ ((tls_model ("initial-exec")));
__thread struct clock_ms_span clock_ms_span
    __attribute__ ((tls_model ("initial-exec")));

/* See clock.h.  anchor_convert is monotonic in the TSC: the readings
   from TSC up to the first one that converts into the next millisecond,
   and within the anchor's life, are in TSC's millisecond.  That first
   one is ANCHOR's TSC + D, D the least with NS0 + floor (D * RATE / 2^32)
   >= NEXT (NS0 the anchor's ns, NEXT the next millisecond's first ns):
   D = ceil ((NEXT - NS0) * 2^32 / RATE).  Once a millisecond a thread.  */
void
clock_ms_span_set (const struct anchor *anchor, uint32_t sequence, uint64_t tsc,
                   uint64_t ns)
{
  uint64_t ms = ns / 1000000;
  if (anchor->rate == 0) /* never, when the anchor covers a reading */
    return;
  unsigned __int128 want = (unsigned __int128) ((ms + 1) * 1000000 - anchor->ns)
                           << 32;
  unsigned __int128 ticks = (want + anchor->rate - 1) / anchor->rate;
  uint64_t end = anchor->ticks_life; /* from the anchor's TSC */
  if (ticks < end)
    end = (uint64_t) ticks;
  /* A signal handler's reading that interrupted this thread's setting
     of the span leaves it alone: their fields would mix.  */
  uint32_t generation = clock_ms_span.generation;
  if (generation & 1)
    return;
  clock_ms_span.generation = generation + 1;
  atomic_signal_fence (memory_order_seq_cst);
  /* TSC is covered (below the life) and in MS (below TICKS).  */
  clock_ms_span.tsc_low = tsc;
  clock_ms_span.tsc_span = end - (tsc - anchor->tsc);
  clock_ms_span.ms = ms;
  clock_ms_span.sequence = sequence;
  atomic_signal_fence (memory_order_seq_cst);
  clock_ms_span.generation = generation + 2;
}

/* See internal.h.  */
uint64_t
clock_reading_tsc (void)
{
  return atomic_load_explicit (&tsc_state, memory_order_relaxed) == 1
             ? clock_last_tsc
             : __rdtsc ();
}

/* clock_exact_ns when the TSC is usable and the anchor current: an
   rdtsc and a multiplication, inlined into clock_stamp.  False when the
   slow path must read (the first reading, no usable TSC, the anchor too
   old or being renewed).  */
static inline bool
exact_ns_from_anchor (int64_t *ns)
{
  struct anchor anchor;
  if (UNLIKELY (atomic_load_explicit (&tsc_state, memory_order_relaxed) != 1))
    return false;
  uint64_t tsc = __rdtsc ();
  clock_last_tsc = tsc;
  if (UNLIKELY (!anchor_read (&anchor) || !anchor_covers (&anchor, tsc)))
    return false;
  *ns = (int64_t) anchor_convert (&anchor, tsc);
  return true;
}

int64_t
clock_exact_ns (void)
{
  struct anchor anchor;
  int64_t fast;
  if (LIKELY (exact_ns_from_anchor (&fast)))
    return fast;
  int state = atomic_load_explicit (&tsc_state, memory_order_relaxed);
  if (UNLIKELY (state == 0))
    {
      state = tsc_is_usable () ? 1 : 2;
      atomic_store_explicit (&tsc_state, state, memory_order_relaxed);
    }
  if (state != 1)
    {
      clock_last_tsc = __rdtsc ();
      return monotonic_ns ();
    }
  /* The anchor again (exact_ns_from_anchor found it unusable, or another
     thread has renewed it since).  */
  uint64_t tsc = __rdtsc ();
  clock_last_tsc = tsc;
  bool consistent = anchor_read (&anchor);
  if (consistent && anchor_covers (&anchor, tsc))
    return (int64_t) anchor_convert (&anchor, tsc);
  /* An anchor pairs a TSC value with the clock_gettime read between two
     TSC reads close together: a thread descheduled in between would
     pair the TSC with a later time and shift every reading after it.  */
  for (int attempt = 0; attempt < ANCHOR_ATTEMPTS; attempt++)
    {
      uint64_t before = __rdtsc ();
      int64_t ns = monotonic_ns ();
      uint64_t after = __rdtsc ();
      if (after - before > ANCHOR_READ_TICKS_MAX)
        continue;
      if (consistent && !anchor_covers (&anchor, before))
        renew_anchor (before + (after - before) / 2, ns);
      return ns;
    }
  return monotonic_ns ();
}

/* The reading thread's rseq area (glibc registers one per thread): its
   rseq_cs word is cleared by the kernel whenever the thread is
   descheduled, migrated or signalled, as it is outside the empty
   critical section described below.  Set at each exact reading, it says
   at the next one whether the thread has run without a break since.  */
static const uint32_t rseq_signature[2] = { RSEQ_SIG, 0 };
static struct rseq_cs empty_critical_section __attribute__ ((aligned (32)));

static inline _Atomic uint64_t *
thread_rseq_cs (void)
{
  return (_Atomic uint64_t *) ((char *) __builtin_thread_pointer ()
                               + __rseq_offset
                               + offsetof (struct rseq, rseq_cs));
}

/* Point the thread's rseq_cs at the empty critical section: the kernel
   clears it when the thread next comes back from a break.  Not without
   rseq (the kernel would never clear it).  */
static inline void
mark_running (void)
{
  if (__rseq_size == 0)
    return;
  if (UNLIKELY (empty_critical_section.abort_ip == 0))
    {
      empty_critical_section.start_ip = (uintptr_t) &rseq_signature[1];
      empty_critical_section.abort_ip = (uintptr_t) &rseq_signature[1];
    }
  atomic_store_explicit (thread_rseq_cs (),
                         (uint64_t) (uintptr_t) &empty_critical_section,
                         memory_order_relaxed);
}

/* See internal.h.  The ticker's word (ticker.c) while it is valid and
   the thread has not been off its CPU since its last exact reading, but
   for one reading in TICKER_CHECK_EVERY of each thread; the exact clock
   otherwise.  */
int64_t
clock_now_ns (void)
{
  if (LIKELY (
          atomic_load_explicit (&clock_ticker.valid, memory_order_acquire)
          && (++clock_ticker_reads & (TICKER_CHECK_EVERY - 1)) != 0
          && atomic_load_explicit (thread_rseq_cs (), memory_order_relaxed) != 0
          && atomic_load_explicit (&clock_ticker.alive, memory_order_relaxed)
                 != 0))
    {
      if (UNLIKELY (
              !atomic_load_explicit (&clock_ticker.used, memory_order_relaxed)))
        atomic_store_explicit (&clock_ticker.used, true, memory_order_relaxed);
      clock_last_tsc
          = atomic_load_explicit (&clock_ticker.tsc, memory_order_relaxed);
      return (int64_t) atomic_load_explicit (&clock_ticker.now_ns,
                                             memory_order_relaxed);
    }
  if (!runtime_options.clock_ticker)
    return clock_exact_ns ();
  /* The helper rests (ticker.c): the plain exact reading, until the
     rest is over.  */
  uint64_t rest_until = atomic_load_explicit (&clock_ticker.rest_until_ns,
                                              memory_order_relaxed);
  if (UNLIKELY (rest_until != 0))
    {
      int64_t ns = clock_exact_ns ();
      if ((uint64_t) ns < rest_until)
        return ns;
      atomic_store_explicit (&clock_ticker.rest_until_ns, 0,
                             memory_order_relaxed);
    }
  /* The thread's 64th reading without a break, the word valid: what a
     reading from the word would have been behind, sampled.  */
  bool sample
      = (clock_ticker_reads & (TICKER_CHECK_EVERY - 1)) == 0
        && atomic_load_explicit (&clock_ticker.valid, memory_order_relaxed)
        && atomic_load_explicit (thread_rseq_cs (), memory_order_relaxed) != 0;
  /* Marked before the reading: a break after it clears the mark.  Not
     without rseq (the kernel would never clear it).  */
  mark_running ();
  return clock_ticker_slow (sample);
}

int64_t clock_start_ms;

/* A hold (clock_hold_begin): open, and the reading it keeps.  */
__thread bool clock_hold_open __attribute__ ((tls_model ("initial-exec")));
static __thread bool hold_has_stamp
    __attribute__ ((tls_model ("initial-exec")));
static __thread struct clock_stamp held_stamp
    __attribute__ ((tls_model ("initial-exec")));
static _Atomic uint64_t hold_reuses; /* all threads' */

/* See internal.h.  */
bool
clock_hold_begin (size_t copy_bytes)
{
  if (copy_bytes > CLOCK_HOLD_COPY_MAX || __rseq_size == 0
      || runtime_options.clock_ticker
      || atomic_load_explicit (&hooks_count, memory_order_relaxed) != 0)
    return false;
  /* From here on, a break (a preemption, a migration, a signal: code
     of the program's that may run) spends the hold.  */
  mark_running ();
  clock_hold_open = true;
  hold_has_stamp = false;
  return true;
}

void
clock_hold_end (void)
{
  clock_hold_open = false;
}

/* clock_stamp inside a hold: while the thread has not been off its CPU
   since clock_hold_begin (its rseq_cs still points at our empty
   critical section: a signal handler's own critical section would not),
   the hold's first reading; after a break, the hold is spent and every
   reading is new.  */
static __attribute__ ((noinline)) struct clock_stamp
stamp_in_hold (void)
{
  if (atomic_load_explicit (thread_rseq_cs (), memory_order_relaxed)
      != (uint64_t) (uintptr_t) &empty_critical_section)
    {
      clock_hold_open = false;
      return clock_stamp ();
    }
  if (hold_has_stamp)
    {
      /* A plain add while the process has one thread (no locked
         instruction).  */
      if (__libc_single_threaded)
        atomic_store_explicit (
            &hold_reuses,
            atomic_load_explicit (&hold_reuses, memory_order_relaxed) + 1,
            memory_order_relaxed);
      else
        atomic_fetch_add_explicit (&hold_reuses, 1, memory_order_relaxed);
      return held_stamp;
    }
  clock_hold_open = false;
  held_stamp = clock_stamp ();
  clock_hold_open = true;
  hold_has_stamp = true;
  return held_stamp;
}

/* See internal.h.  */
void
clock_report (void)
{
  log_printf ("clock: %lu readings shared by a realloc's allocation and "
              "free",
              (unsigned long) atomic_load (&hold_reuses));
}

/* See clock.h: the reading the inline path does not take, as that path
   would take it where it can.  */
struct clock_stamp
clock_stamp_slow (void)
{
  struct clock_stamp stamp;
  int64_t ns;

  if (UNLIKELY (clock_hold_open))
    return stamp_in_hold ();
  if (LIKELY (!runtime_options.clock_ticker) && exact_ns_from_anchor (&ns))
    stamp.tsc = clock_last_tsc;
  else
    {
      ns = clock_now_ns ();
      stamp.tsc = clock_reading_tsc ();
    }
  stamp.ms = (uint32_t) (ns / 1000000 - clock_start_ms);
  stamp.cpu = runtime_current_cpu ();
  return stamp;
}
