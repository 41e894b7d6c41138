/* The heap's high-water mark and its timeline: what the side file's
   version 3 section holds (extraformat.h, docs/profile-format.md).

   Every recorded allocation adds its requested bytes (times its weight
   under sampling) to the process's live count and to its context's,
   every free takes them away; the allocator's own reading of the time
   stamp counter gives the time.  While the process has one thread
   (glibc's __libc_single_threaded) these are plain loads and stores:
   no locked instruction on the path of a single-threaded program.  Once
   it has more, the contexts' counts are given up for good (atomic adds
   on a context's line, which the threads that allocate and free from it
   would pass to and fro, cost more than they save) and only the total
   is kept, with an atomic add.  The peak is the highest count seen, with
   its time.  What was live at the peak, per context, is copied lazily,
   as DHAT copies its counts: from the contexts' live counts while they
   are kept (a walk of the contexts that have allocated, which peak.c
   keeps in a list of its own: far fewer than the live blocks), else by
   walking the live blocks (allocator_for_each_live); at the first free
   after a new peak, while the
   heap is still at it, so a program that grows without freeing pays
   nothing more.  peak_tolerance bounds the copies: a new one is made
   only when the peak exceeds the bytes of the last one by more than that
   percentage, and the side file states the error (the peak's bytes minus
   the copy's).  0 copies at every new peak: exact.  With a tolerance the
   copies also keep to a budget of time (1/COST_SHARE of the run): until
   the last copy's cost has been paid back, a new one waits unless the
   peak is more than COPY_FORCE_FACTOR tolerances above it.

   While the counts are kept, the common case is inline in the allocator
   (peak.h) and decides nothing: each event compares its time with one
   deadline and an allocation compares the live bytes with one watermark.
   The decisions are made here, out of line, and leave their marks: a new
   peak that wants a copy arms it (the free deadline then falls to the
   time the budget allows, at once when exact); the free that finds it
   armed copies, or, if the heap has meanwhile dropped more than the
   tolerance below the peak, lowers the watermark so that an allocation
   back near the peak arms it again.  In a threaded process every event
   takes the out-of-line path, as above.

   The timeline samples the live bytes, and the contexts holding the most
   of them (another walk, of either kind), at most once per interval:
   the first allocation or free after an interval has passed records the
   heap as it was just before it, at the time of the event before it, so
   that the level a quiet period held is in the timeline whatever happened
   in the burst before.  It keeps TIMELINE_SLOTS samples: when they are
   full, each pair becomes the one with more bytes and the interval
   doubles, so a run of 50 ms and one of 5 hours both end with between
   TIMELINE_SLOTS / 2 and TIMELINE_SLOTS samples (fewer when the program
   allocates less often than the interval).  A sample waits at least
   COST_SHARE times as long as the last one took.

   A signal handler that allocates or frees re-enters these paths on the
   thread it interrupted, which may be inside them.  The thread marks
   itself (peak_busy) while it holds snapshot_lock or timeline_lock, and
   an event that finds the mark leaves the copy and the sample to the
   interrupted frame or a later event: it updates the counts only, so
   nothing goes unrecorded.  A walk of the live blocks holds the
   allocator's locks, which a handler's own allocation or free may take:
   it runs with the thread's signals blocked.  A walk of the blocks from
   a signal handler (a signal blocked when it starts: the one handled)
   finds those locks held when it interrupted an allocation or free, so
   it gives up after a bounded wait, as a dump from a signal does: a
   sample so given up is not kept, a copy so given up is dropped (its
   contexts half written) and stays wanted: the next free makes it; stats=1 counts them (peak_walks_given_up).  The walks of the
   contexts take no lock but ours and block nothing (two system calls
   would cost more than the walk of a few contexts).

   Times are time stamp counter ticks inside, microseconds since the
   start in the side file (converted with two clock readings: at the
   start and at the dump).  */

#define _GNU_SOURCE /* sigisemptyset */
#include "internal.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/single_threaded.h>
#include <time.h>

#define TIMELINE_SLOTS 512
#define TIMELINE_FIRST_INTERVAL_US 100
/* Walks take at most about 1/COST_SHARE of the time.  */
#define COST_SHARE 100
#define COPY_FORCE_FACTOR 10
/* Ticks per microsecond assumed until the first calibration.  */
#define ASSUMED_TICKS_PER_US 1000

static uint64_t start_ns, start_tsc;
static _Atomic uint64_t ticks_per_us = ASSUMED_TICKS_PER_US;

/* What the inline paths use (peak.h).  */
struct peak_hot peak_hot;

/* At new peaks, copies and samples.  */
static struct
{
  /* Of the last copy of the peak's breakdown.  */
  _Atomic int64_t snapshot_bytes;
  _Atomic uint64_t next_copy_tsc, timeline_next_tsc;
  /* A free at or after it copies the breakdown (counting only): the
     copy is armed.  UINT64_MAX: not armed.  */
  _Atomic uint64_t copy_check_tsc;
} cold __attribute__ ((aligned (64))) = { .copy_check_tsc = UINT64_MAX };

/* The contexts that have allocated, newest first (pushed once each).
   Their live counts are kept until the process has a second thread
   (then counts_given_up, for good).  */
static struct depot_context *_Atomic listed_contexts;
static _Atomic int64_t listed_count;
static _Atomic bool counts_given_up;

/* The last copy for the peak's breakdown: contexts whose peak_generation
   is copy_generation hold its bytes.  */
static spinlock_t snapshot_lock = SPINLOCK_INIT;
static uint64_t snapshot_blocks, snapshot_tsc, copy_generation;

static spinlock_t timeline_lock = SPINLOCK_INIT;
static struct memprof_extra_sample timeline[TIMELINE_SLOTS];
static size_t timeline_count;
static uint64_t timeline_interval, sample_generation; /* ticks */
static struct memprof_extra_sample dump_timeline[TIMELINE_SLOTS + 1];

/* This thread holds snapshot_lock or timeline_lock (or both, across a
   fork): a signal handler's event on it must not wait for them.  */
static __thread bool peak_busy __attribute__ ((tls_model ("initial-exec")));
/* This thread is in peak_collect, never called from a signal handler:
   its walks wait for the allocator's locks, whatever its signal mask
   (the dump thread blocks every signal).  */
static __thread bool peak_collecting
    __attribute__ ((tls_model ("initial-exec")));

/* Tries at a lock held, by a walk from a signal handler, before it gives
   up: about a millisecond, far longer than another thread holds one, and
   short enough for a handler that may run often (a dump from a signal
   waits longer: profile.c's SIGNAL_SPIN_ATTEMPTS).  */
#define HANDLER_SPIN_ATTEMPTS (1UL << 14)

_Atomic uint64_t peak_walks_given_up;

/* COUNTER + DELTA, stored and returned: a plain load and store while the
   process has a single thread (no other can race), else an atomic add.
   glibc clears __libc_single_threaded before the first pthread_create
   starts the new thread, and sets it again only when one is left.  */
static inline int64_t
add_to (_Atomic int64_t *counter, int64_t delta)
{
  if (__libc_single_threaded)
    {
      int64_t sum
          = atomic_load_explicit (counter, memory_order_relaxed) + delta;
      atomic_store_explicit (counter, sum, memory_order_relaxed);
      return sum;
    }
  return atomic_fetch_add_explicit (counter, delta, memory_order_relaxed)
         + delta;
}

/* The inline paths' deadlines (peak.h) from the timeline's next sample
   and the armed copy; 0 (always out of line) once the counts are given
   up.  */
static void
set_deadlines (void)
{
  uint64_t sample = atomic_load (&cold.timeline_next_tsc),
           copy = atomic_load (&cold.copy_check_tsc);
  if (atomic_load (&counts_given_up))
    sample = copy = 0;
  atomic_store (&peak_hot.alloc_check_tsc, sample);
  atomic_store (&peak_hot.free_check_tsc, copy < sample ? copy : sample);
}

/* Whether the contexts' live counts are (still) kept.  Once another
   thread has been seen they never are again: their counts stop.  (A
   walk may still take the live blocks when they are fewer than the
   contexts: walk_contexts.)  */
static inline bool
counting_per_context (void)
{
  if (LIKELY (__libc_single_threaded)
      && !atomic_load_explicit (&counts_given_up, memory_order_relaxed))
    return true;
  if (!atomic_load_explicit (&counts_given_up, memory_order_relaxed))
    {
      atomic_store (&counts_given_up, true);
      set_deadlines ();
    }
  return false;
}

static uint64_t
monotonic_ns (void)
{
  struct timespec now;
  clock_gettime (CLOCK_MONOTONIC, &now);
  return (uint64_t) now.tv_sec * 1000000000u + (uint64_t) now.tv_nsec;
}

/* Measure the time stamp counter's rate again (once per walk: rare),
   when at least MIN_NS have passed since the start (a steady figure).  */
static void
calibrate (uint64_t min_ns)
{
  uint64_t ns = monotonic_ns () - start_ns;
  uint64_t ticks = __builtin_ia32_rdtsc () - start_tsc;
  if (ns >= min_ns && ns >= 1000 && ticks / (ns / 1000) > 0)
    atomic_store (&ticks_per_us, ticks / (ns / 1000));
}

static uint64_t
us_of (uint64_t tsc)
{
  return tsc > start_tsc ? (tsc - start_tsc) / atomic_load (&ticks_per_us) : 0;
}

void
peak_start (void)
{
  start_ns = monotonic_ns ();
  start_tsc = __builtin_ia32_rdtsc ();
  timeline_interval = TIMELINE_FIRST_INTERVAL_US * ASSUMED_TICKS_PER_US;
  atomic_store (&peak_hot.enabled, runtime_options.peak);
  set_deadlines ();
}

/* The bytes a walk may lag the peak by.  */
static int64_t
tolerance (int64_t peak)
{
  return peak / 100 * (int64_t) runtime_options.peak_tolerance;
}

/* ---- The peak's breakdown ---- */

struct copy
{
  uint64_t bytes, blocks;
};

static void
copy_block (uintptr_t user, uint64_t size, struct depot_context *context,
            uint32_t alloc_timestamp, uint32_t alloc_cpu, uint32_t weight,
            void *cookie)
{
  struct copy *copy = cookie;
  (void) user;
  (void) alloc_timestamp;
  (void) alloc_cpu;
  if (context->peak.peak_generation != copy_generation)
    {
      context->peak.peak_generation = copy_generation;
      context->peak.peak_bytes = context->peak.peak_blocks = 0;
    }
  context->peak.peak_bytes += size * weight;
  context->peak.peak_blocks += weight;
  copy->bytes += size * weight;
  copy->blocks += weight;
}

/* Call VISIT for each listed context with live bytes or blocks, with
   them.  */
static void
for_each_live_context (void (*visit) (struct depot_context *, uint64_t bytes,
                                      uint64_t blocks, void *cookie),
                       void *cookie)
{
  for (struct depot_context *context = atomic_load (&listed_contexts);
       context != NULL; context = context->peak.next_listed)
    {
      int64_t bytes = atomic_load_explicit (&context->peak.live_bytes,
                                            memory_order_relaxed);
      int64_t blocks = atomic_load_explicit (&context->peak.live_blocks,
                                             memory_order_relaxed);
      if (bytes > 0 || blocks > 0)
        visit (context, (uint64_t) bytes, (uint64_t) blocks, cookie);
    }
}

/* Whether a walk should visit the listed contexts rather than the live
   blocks: while their counts are kept, and when they are no more than
   the blocks (a program of many contexts and few live blocks walks the
   blocks).  */
static bool
walk_contexts (void)
{
  return counting_per_context ()
         && atomic_load (&listed_count) <= atomic_load (&peak_hot.live_records);
}

static void
copy_context (struct depot_context *context, uint64_t bytes, uint64_t blocks,
              void *cookie)
{
  struct copy *copy = cookie;
  context->peak.peak_generation = copy_generation;
  context->peak.peak_bytes = bytes;
  context->peak.peak_blocks = blocks;
  copy->bytes += bytes;
  copy->blocks += blocks;
}

/* allocator_for_each_live (VISIT, COOKIE) with this thread's signals
   blocked: the walk holds the allocator's locks, which a handler's
   allocation or free on this thread would wait for.  With a signal
   blocked before (in a handler, most likely), the thread may have been
   interrupted holding one of them: the walk gives up after
   HANDLER_SPIN_ATTEMPTS at a lock held.  Whether it went through.  */
static bool
walk_live_blocks (live_block_visitor visit, void *cookie)
{
  sigset_t all, saved;
  sigfillset (&all);
  pthread_sigmask (SIG_BLOCK, &all, &saved);
  unsigned long attempts
      = peak_collecting || sigisemptyset (&saved) ? 0 : HANDLER_SPIN_ATTEMPTS;
  bool walked = allocator_for_each_live (visit, cookie, attempts);
  pthread_sigmask (SIG_SETMASK, &saved, NULL);
  if (!walked)
    atomic_fetch_add_explicit (&peak_walks_given_up, 1, memory_order_relaxed);
  return walked;
}

/* Copy every context's live bytes and blocks as its share of the peak;
   the sums in *BYTES and *BLOCKS.  Under snapshot_lock.  A walk from a
   signal handler that gave up leaves no copy (0 bytes, 0 blocks; the
   contexts' half written one has a generation of its own) and returns
   false.  */
static bool
copy_live_counts (uint64_t *bytes, uint64_t *blocks)
{
  struct copy copy = { 0, 0 };
  bool walked = true;
  copy_generation++;
  if (walk_contexts ())
    for_each_live_context (copy_context, &copy);
  else if (!(walked = walk_live_blocks (copy_block, &copy)))
    {
      copy_generation++;
      copy.bytes = copy.blocks = 0;
    }
  *bytes = copy.bytes;
  *blocks = copy.blocks;
  return walked;
}

/* Copy the contexts' live counts when the heap is (within the tolerance)
   at a peak the last copy is too far below; FORCED: whatever the time
   budget.  False when a walk from a signal handler gave up: the copy is
   still wanted.  */
static bool
copy_if_at_new_peak (uint64_t tsc, bool forced)
{
  int64_t peak
      = atomic_load_explicit (&peak_hot.peak_bytes, memory_order_relaxed);
  int64_t slack = tolerance (peak);
  int64_t copied
      = atomic_load_explicit (&cold.snapshot_bytes, memory_order_relaxed);
  if (peak <= copied + slack
      || atomic_load_explicit (&peak_hot.live_bytes, memory_order_relaxed)
                 + slack
             < peak
      || (!forced && slack > 0
          && tsc < atomic_load_explicit (&cold.next_copy_tsc,
                                         memory_order_relaxed)
          && peak <= copied + COPY_FORCE_FACTOR * slack))
    return true;
  /* Marked before the lock is taken, cleared after it is given back: a
     handler in between must not wait either.  */
  peak_busy = true;
  spin_lock (&snapshot_lock);
  int64_t live = atomic_load (&peak_hot.live_bytes);
  bool walked = true;
  if (peak > atomic_load (&cold.snapshot_bytes) + slack && live + slack >= peak)
    {
      uint64_t bytes, blocks;
      uint64_t started = __builtin_ia32_rdtsc ();
      walked = copy_live_counts (&bytes, &blocks);
      atomic_store (&cold.snapshot_bytes, (int64_t) bytes);
      snapshot_blocks = blocks;
      snapshot_tsc = tsc;
      uint64_t done = __builtin_ia32_rdtsc ();
      atomic_store (&cold.next_copy_tsc, done + (done - started) * COST_SHARE);
      calibrate (1000000);
    }
  spin_unlock (&snapshot_lock);
  peak_busy = false;
  return walked;
}

/* ---- The inline paths' marks (peak.h), while counting ---- */

/* The highest peak that cannot want a copy of the breakdown while the
   last one holds COPIED bytes: a peak P wants one when P > COPIED +
   tolerance (P), and tolerance (P) > (P / 100 - 1) * peak_tolerance.  */
static int64_t
no_copy_below (int64_t copied)
{
  int64_t percent = (int64_t) runtime_options.peak_tolerance;
  if (percent >= 100)
    return copied;
  if (copied <= percent)
    return 0;
  return (int64_t) ((__int128) (copied - percent) * 100 / (100 - percent));
}

/* The peak wants a copy and the heap is near it: arm the copy for the
   next free (now, or when the time budget allows).  */
static void
arm_copy (int64_t peak, int64_t slack, int64_t copied)
{
  bool now = slack == 0 || peak > copied + COPY_FORCE_FACTOR * slack;
  atomic_store (&cold.copy_check_tsc,
                now ? 0 : atomic_load (&cold.next_copy_tsc));
  /* Waiting for the budget: a peak beyond the force factor arms it for
     now.  */
  atomic_store (&peak_hot.arm_bytes,
                now ? INT64_MAX : copied + COPY_FORCE_FACTOR * slack);
  set_deadlines ();
}

/* After a copy, or a free that found an armed copy it could not make
   (LIVE bytes then): the marks for what comes next.  */
static void
rearm_after_copy_check (int64_t live)
{
  int64_t peak = atomic_load (&peak_hot.peak_bytes), slack = tolerance (peak),
          copied = atomic_load (&cold.snapshot_bytes);
  atomic_store (&cold.copy_check_tsc, UINT64_MAX);
  atomic_store (&peak_hot.arm_bytes, no_copy_below (copied));
  /* Still wanted, the heap below the peak: an allocation back near it
     arms the copy again.  */
  atomic_store (&peak_hot.watch_bytes,
                peak > copied + slack && live + slack < peak ? peak - slack - 1
                                                             : peak);
  set_deadlines ();
}

/* An allocation took the live bytes to LIVE, above the watermark, at TSC:
   a new peak, or the heap back near a peak that wants a copy.  */
void
peak_crossed (int64_t live, uint64_t tsc)
{
  int64_t peak = atomic_load (&peak_hot.peak_bytes);
  if (live > peak)
    {
      peak = live;
      atomic_store (&peak_hot.peak_bytes, peak);
      atomic_store (&peak_hot.peak_tsc, tsc);
    }
  atomic_store (&peak_hot.watch_bytes, peak);
  int64_t slack = tolerance (peak), copied = atomic_load (&cold.snapshot_bytes);
  if (peak > copied + slack)
    arm_copy (peak, slack, copied);
  else
    atomic_store (&peak_hot.arm_bytes, no_copy_below (copied));
}

/* ---- The timeline ---- */

/* Place CONTEXT, with BYTES live, in SAMPLE's top (largest first) if it
   is among the largest so far.  */
static void
place_in_top (struct memprof_extra_sample *sample, uint64_t id, uint64_t bytes)
{
  int at = MEMPROF_EXTRA_SAMPLE_TOP - 1;
  if (bytes <= sample->top[at].bytes)
    return;
  while (at > 0 && sample->top[at - 1].bytes < bytes)
    {
      sample->top[at] = sample->top[at - 1];
      at--;
    }
  sample->top[at].stack_id = id;
  sample->top[at].bytes = bytes;
}

static void
sample_block (uintptr_t user, uint64_t size, struct depot_context *context,
              uint32_t alloc_timestamp, uint32_t alloc_cpu, uint32_t weight,
              void *cookie)
{
  struct memprof_extra_sample *sample = cookie;
  (void) user;
  (void) alloc_timestamp;
  (void) alloc_cpu;
  if (context->peak.sample_generation != sample_generation)
    {
      context->peak.sample_generation = sample_generation;
      context->peak.sample_bytes = 0;
    }
  uint64_t bytes = context->peak.sample_bytes += size * weight;
  sample->live_bytes += size * weight;
  sample->live_blocks += weight;
  /* CONTEXT's sum only grows during the walk: out of the top first, then
     placed again.  */
  int at = 0;
  while (at < MEMPROF_EXTRA_SAMPLE_TOP
         && sample->top[at].stack_id != context->id)
    at++;
  if (at < MEMPROF_EXTRA_SAMPLE_TOP)
    {
      memmove (&sample->top[at], &sample->top[at + 1],
               (MEMPROF_EXTRA_SAMPLE_TOP - 1 - at) * sizeof sample->top[0]);
      memset (&sample->top[MEMPROF_EXTRA_SAMPLE_TOP - 1], 0,
              sizeof sample->top[0]);
    }
  place_in_top (sample, context->id, bytes);
}

static void
sample_context (struct depot_context *context, uint64_t bytes, uint64_t blocks,
                void *cookie)
{
  struct memprof_extra_sample *sample = cookie;
  sample->live_bytes += bytes;
  sample->live_blocks += blocks;
  place_in_top (sample, context->id, bytes);
}

/* Whether it was taken (a walk from a signal handler may give up).  */
static bool
take_sample (struct memprof_extra_sample *sample, uint64_t tsc)
{
  memset (sample, 0, sizeof *sample);
  sample->time_us = tsc; /* ticks until the dump converts them */
  if (!walk_contexts ())
    {
      sample_generation++;
      return walk_live_blocks (sample_block, sample);
    }
  for_each_live_context (sample_context, sample);
  return true;
}

/* Halve the samples (each pair keeps its larger one, so the peaks stay)
   and double the interval.  */
static void
compact_timeline (void)
{
  for (size_t i = 0; i < TIMELINE_SLOTS / 2; i++)
    {
      const struct memprof_extra_sample *a = &timeline[2 * i],
                                        *b = &timeline[2 * i + 1];
      timeline[i] = a->live_bytes > b->live_bytes ? *a : *b;
    }
  timeline_count = TIMELINE_SLOTS / 2;
  timeline_interval *= 2;
}

/* Before an allocation or free at TSC changes the heap.  With threads
   the sample is stamped with TSC itself (the heap as it was just before
   it): no time stored on a line every thread writes.  */
static void
sample_if_due (uint64_t tsc)
{
  uint64_t before = tsc;
  if (__libc_single_threaded)
    {
      before = atomic_load_explicit (&peak_hot.last_event_tsc,
                                     memory_order_relaxed);
      atomic_store_explicit (&peak_hot.last_event_tsc, tsc,
                             memory_order_relaxed);
    }
  if (tsc < atomic_load_explicit (&cold.timeline_next_tsc, memory_order_relaxed)
      || atomic_flag_test_and_set_explicit (&timeline_lock.flag,
                                            memory_order_acquire))
    return;
  peak_busy = true;
  if (tsc >= atomic_load (&cold.timeline_next_tsc))
    {
      if (timeline_count == 0)
        {
          calibrate (0);
          timeline_interval
              = TIMELINE_FIRST_INTERVAL_US * atomic_load (&ticks_per_us);
        }
      if (timeline_count == TIMELINE_SLOTS)
        compact_timeline ();
      /* The walk's own cost (TSC may have been read a while before).  */
      uint64_t started = __builtin_ia32_rdtsc ();
      if (take_sample (&timeline[timeline_count], before ? before : tsc))
        timeline_count++;
      uint64_t cost = __builtin_ia32_rdtsc () - started,
               wait = timeline_interval;
      if (wait < cost * COST_SHARE)
        wait = cost * COST_SHARE;
      atomic_store (&cold.timeline_next_tsc, tsc + wait);
      set_deadlines ();
    }
  spin_unlock (&timeline_lock);
  peak_busy = false;
}

/* ---- From the allocator ---- */

/* Put CONTEXT on the list of contexts that have allocated, once.  */
static void
list_context (struct depot_context *context)
{
  uint32_t unlisted = 0;
  if (!atomic_compare_exchange_strong (&context->peak.listed, &unlisted, 1))
    return;
  struct depot_context *head = atomic_load (&listed_contexts);
  do
    context->peak.next_listed = head;
  while (!atomic_compare_exchange_weak (&listed_contexts, &head, context));
  atomic_fetch_add (&listed_count, 1);
}

/* The allocation paths out of line (peak.h): a second thread, a sample
   due, a context not yet listed.  */
void
peak_allocation_slow (struct depot_context *context, uint64_t size,
                      uint32_t weight, uint64_t tsc)
{
  if (!atomic_load_explicit (&peak_hot.enabled, memory_order_relaxed))
    return;
  int64_t bytes = (int64_t) (size * weight);
  /* Re-entered by a signal handler (as in peak_free_slow): no sample.  */
  if (!peak_busy)
    sample_if_due (tsc);
  if (counting_per_context ())
    {
      if (UNLIKELY (!atomic_load_explicit (&context->peak.listed,
                                           memory_order_relaxed)))
        list_context (context);
      peak_add_alone (&context->peak.live_bytes, bytes);
      peak_add_alone (&context->peak.live_blocks, (int64_t) weight);
      peak_add_alone (&peak_hot.live_records, 1);
      int64_t live = peak_add_alone (&peak_hot.live_bytes, bytes);
      if (live > atomic_load (&peak_hot.watch_bytes))
        peak_crossed (live, tsc);
      return;
    }
  /* Listed still, for peak_collect.  */
  if (UNLIKELY (
          !atomic_load_explicit (&context->peak.listed, memory_order_relaxed)))
    list_context (context);
  int64_t live = add_to (&peak_hot.live_bytes, bytes);
  int64_t peak
      = atomic_load_explicit (&peak_hot.peak_bytes, memory_order_relaxed);
  if (live <= peak)
    return;
  if (__libc_single_threaded)
    atomic_store_explicit (&peak_hot.peak_bytes, live, memory_order_relaxed);
  else
    while (live > peak
           && !atomic_compare_exchange_weak (&peak_hot.peak_bytes, &peak, live))
      ;
  if (live >= peak)
    atomic_store_explicit (&peak_hot.peak_tsc, tsc, memory_order_relaxed);
}

/* The free paths out of line: a second thread, a sample or an armed
   copy due.  */
void
peak_free_slow (struct depot_context *context, uint64_t size, uint32_t weight,
                uint64_t tsc)
{
  if (!atomic_load_explicit (&peak_hot.enabled, memory_order_relaxed))
    return;
  int64_t bytes = (int64_t) (size * weight);
  /* A signal handler's free on a thread inside the copy or the sample:
     the counts only (the copy stays armed for the next free).  */
  bool reentered = peak_busy;
  if (counting_per_context ())
    {
      /* A copy given up stays armed: the next free makes it.  */
      if (!reentered && tsc >= atomic_load (&cold.copy_check_tsc)
          && copy_if_at_new_peak (tsc, true))
        rearm_after_copy_check (atomic_load (&peak_hot.live_bytes));
      if (!reentered)
        sample_if_due (tsc);
      peak_add_alone (&context->peak.live_bytes, -bytes);
      peak_add_alone (&context->peak.live_blocks, -(int64_t) weight);
      peak_add_alone (&peak_hot.live_records, -1);
      peak_add_alone (&peak_hot.live_bytes, -bytes);
      return;
    }
  if (!reentered)
    {
      copy_if_at_new_peak (tsc, false);
      sample_if_due (tsc);
    }
  add_to (&peak_hot.live_bytes, -bytes);
}

/* ---- fork ---- */

void
peak_fork_prepare (void)
{
  peak_busy = true;
  spin_lock (&timeline_lock);
  spin_lock (&snapshot_lock);
}

void
peak_fork_release (void)
{
  spin_unlock (&snapshot_lock);
  spin_unlock (&timeline_lock);
  peak_busy = false;
}

/* ---- For the profile writer ---- */

struct collect
{
  struct memprof_extra_peak_context *contexts;
  size_t capacity, used;
};

static void
collect_context (struct depot_context *context, struct collect *collect)
{
  if (context->peak.peak_generation != copy_generation || copy_generation == 0
      || context->peak.peak_bytes == 0 || collect->used == collect->capacity)
    return;
  collect->contexts[collect->used].stack_id = context->id;
  collect->contexts[collect->used].bytes = context->peak.peak_bytes;
  collect->contexts[collect->used++].blocks = context->peak.peak_blocks;
}

size_t
peak_context_capacity (void)
{
  return atomic_load (&peak_hot.enabled) ? depot_context_count () + 1 : 0;
}

void
peak_collect (struct memprof_extra_peak *peak,
              struct memprof_extra_peak_context *contexts,
              size_t context_capacity,
              const struct memprof_extra_sample **samples)
{
  uint64_t tsc = __builtin_ia32_rdtsc ();
  memset (peak, 0, sizeof *peak);
  *samples = dump_timeline;
  if (!atomic_load (&peak_hot.enabled))
    return;
  peak_collecting = true;
  /* A program at its peak when the dump comes has not freed since.  */
  copy_if_at_new_peak (tsc, true);
  calibrate (0);

  /* A copy, with the dump's own sample last (not kept: the next dump
     takes another), times in microseconds.  Dumps are one at a time
     (profile.c's lock).  */
  peak_busy = true;
  spin_lock (&timeline_lock);
  memcpy (dump_timeline, timeline, timeline_count * sizeof *timeline);
  take_sample (&dump_timeline[timeline_count], tsc);
  peak->sample_count = timeline_count + 1;
  spin_unlock (&timeline_lock);
  peak_busy = false;
  peak_collecting = false;
  for (size_t i = 0; i < peak->sample_count; i++)
    dump_timeline[i].time_us = us_of (dump_timeline[i].time_us);

  peak_busy = true;
  spin_lock (&snapshot_lock);
  peak->peak_bytes = (uint64_t) atomic_load (&peak_hot.peak_bytes);
  peak->peak_time_us = us_of (atomic_load (&peak_hot.peak_tsc));
  peak->snapshot_bytes = (uint64_t) atomic_load (&cold.snapshot_bytes);
  peak->snapshot_time_us = us_of (snapshot_tsc);
  /* The blocks at the peak: those of the walk (the same moment when
     exact).  */
  peak->peak_blocks = snapshot_blocks;
  struct collect collect = { contexts, context_capacity, 0 };
  /* Every context that has allocated is listed: far fewer than the
     depot's buckets.  */
  for (struct depot_context *context = atomic_load (&listed_contexts);
       context != NULL; context = context->peak.next_listed)
    collect_context (context, &collect);
  spin_unlock (&snapshot_lock);
  peak_busy = false;
  peak->now_us = us_of (tsc);
  peak->context_count = collect.used;
  peak->sample_top = MEMPROF_EXTRA_SAMPLE_TOP;
  peak->sampled = runtime_options.sample_interval > 1;
}
