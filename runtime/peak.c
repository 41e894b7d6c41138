/* The heap's high-water mark and its timeline: what the side file's
   version 3 section holds (extraformat.h, docs/profile-format.md).

   Every recorded allocation adds its requested bytes (times its weight
   under sampling) to the process's live count, every free takes them
   away: one atomic add, and a read of the time stamp counter, per call.
   The peak is the highest count seen, with its time.  What was live at
   the peak, per context, is found by walking the live blocks
   (allocator_for_each_live) lazily, as DHAT copies its counts: at the
   first free after a new peak, while the heap is still at it, so a
   program that grows without freeing pays nothing more.  peak_tolerance
   bounds the walks: a new one is made only when the peak exceeds the
   bytes of the last one by more than that percentage, and the side file
   states the error (the peak's bytes minus the walk's).  0 walks at every
   new peak: exact.  With a tolerance the walks also keep to a budget of
   time (1/COST_SHARE of the run): until the last walk's cost has been
   paid back, a new one waits unless the peak is more than
   COPY_FORCE_FACTOR tolerances above it.

   The timeline samples the live bytes, and the contexts holding the most
   of them (another walk of the live blocks), at most once per interval:
   the first allocation or free after an interval has passed records the
   heap as it was just before it, at the time of the event before it, so
   that the level a quiet period held is in the timeline whatever happened
   in the burst before.  It keeps TIMELINE_SLOTS samples: when they are
   full, each pair becomes the one with more bytes and the interval
   doubles, so a run of 50 ms and one of 5 hours both end with between
   TIMELINE_SLOTS / 2 and TIMELINE_SLOTS samples (fewer when the program
   allocates less often than the interval).  A sample waits at least
   COST_SHARE times as long as the last one took.

   Times are time stamp counter ticks inside, microseconds since the
   start in the side file (converted with two clock readings: at the
   start and at the dump).  */

#include "internal.h"

#include <string.h>
#include <time.h>

#define TIMELINE_SLOTS 512
#define TIMELINE_FIRST_INTERVAL_US 100
/* Walks take at most about 1/COST_SHARE of the time.  */
#define COST_SHARE 100
#define COPY_FORCE_FACTOR 10
/* Ticks per microsecond assumed until the first calibration.  */
#define ASSUMED_TICKS_PER_US 1000

static bool peak_enabled;
static uint64_t start_ns, start_tsc;
static _Atomic uint64_t ticks_per_us = ASSUMED_TICKS_PER_US;

static _Atomic int64_t live_bytes;
static _Atomic int64_t peak_bytes;
static uint64_t peak_tsc;

/* The last walk for the peak's breakdown: contexts whose peak_generation
   is copy_generation hold its bytes.  */
static spinlock_t snapshot_lock = SPINLOCK_INIT;
static _Atomic int64_t snapshot_bytes;
static uint64_t snapshot_blocks, snapshot_tsc, copy_generation;
static _Atomic uint64_t next_copy_tsc;

static spinlock_t timeline_lock = SPINLOCK_INIT;
static struct memprof_extra_sample timeline[TIMELINE_SLOTS];
static size_t timeline_count;
static uint64_t timeline_interval, sample_generation; /* ticks */
static _Atomic uint64_t timeline_next_tsc;
static _Atomic uint64_t last_event_tsc; /* of the last allocation or free */
static struct memprof_extra_sample dump_timeline[TIMELINE_SLOTS + 1];

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
  peak_enabled = runtime_options.peak;
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

/* Walk the live blocks when the heap is (within the tolerance) at a peak
   the last walk is too far below; FORCED: whatever the time budget.  */
static void
copy_if_at_new_peak (uint64_t tsc, bool forced)
{
  int64_t peak = atomic_load_explicit (&peak_bytes, memory_order_relaxed);
  int64_t slack = tolerance (peak);
  int64_t copied = atomic_load_explicit (&snapshot_bytes, memory_order_relaxed);
  if (peak <= copied + slack
      || atomic_load_explicit (&live_bytes, memory_order_relaxed) + slack < peak
      || (!forced && slack > 0 && tsc < atomic_load (&next_copy_tsc)
          && peak <= copied + COPY_FORCE_FACTOR * slack))
    return;
  spin_lock (&snapshot_lock);
  int64_t live = atomic_load (&live_bytes);
  if (peak > atomic_load (&snapshot_bytes) + slack && live + slack >= peak)
    {
      struct copy copy = { 0, 0 };
      uint64_t started = __builtin_ia32_rdtsc ();
      copy_generation++;
      allocator_for_each_live (copy_block, &copy, 0);
      atomic_store (&snapshot_bytes, (int64_t) copy.bytes);
      snapshot_blocks = copy.blocks;
      snapshot_tsc = tsc;
      uint64_t done = __builtin_ia32_rdtsc ();
      atomic_store (&next_copy_tsc, done + (done - started) * COST_SHARE);
      calibrate (1000000);
    }
  spin_unlock (&snapshot_lock);
}

/* ---- The timeline ---- */

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
  /* The top, largest first: CONTEXT's sum only grows during the walk, so
     it is placed again each time.  */
  int at = 0;
  while (at < MEMPROF_EXTRA_SAMPLE_TOP
         && sample->top[at].stack_id != context->id)
    at++;
  if (at == MEMPROF_EXTRA_SAMPLE_TOP)
    {
      if (bytes <= sample->top[MEMPROF_EXTRA_SAMPLE_TOP - 1].bytes)
        return;
      at = MEMPROF_EXTRA_SAMPLE_TOP - 1;
    }
  while (at > 0 && sample->top[at - 1].bytes < bytes)
    {
      sample->top[at] = sample->top[at - 1];
      at--;
    }
  sample->top[at].stack_id = context->id;
  sample->top[at].bytes = bytes;
}

static void
take_sample (struct memprof_extra_sample *sample, uint64_t tsc)
{
  memset (sample, 0, sizeof *sample);
  sample->time_us = tsc; /* ticks until the dump converts them */
  sample_generation++;
  allocator_for_each_live (sample_block, sample, 0);
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

/* Before an allocation or free at TSC changes the heap.  */
static void
sample_if_due (uint64_t tsc)
{
  uint64_t before
      = atomic_load_explicit (&last_event_tsc, memory_order_relaxed);
  atomic_store_explicit (&last_event_tsc, tsc, memory_order_relaxed);
  if (tsc < atomic_load_explicit (&timeline_next_tsc, memory_order_relaxed)
      || atomic_flag_test_and_set_explicit (&timeline_lock.flag,
                                            memory_order_acquire))
    return;
  if (tsc >= atomic_load (&timeline_next_tsc))
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
      take_sample (&timeline[timeline_count++], before ? before : tsc);
      uint64_t cost = __builtin_ia32_rdtsc () - started,
               wait = timeline_interval;
      if (wait < cost * COST_SHARE)
        wait = cost * COST_SHARE;
      atomic_store (&timeline_next_tsc, tsc + wait);
    }
  spin_unlock (&timeline_lock);
}

/* ---- From the allocator ---- */

void
peak_note_allocation (struct depot_context *context, uint64_t size,
                      uint32_t weight, uint64_t tsc)
{
  (void) context;
  if (!peak_enabled)
    return;
  int64_t bytes = (int64_t) (size * weight);
  sample_if_due (tsc);
  int64_t live = atomic_fetch_add (&live_bytes, bytes) + bytes;
  int64_t peak = atomic_load_explicit (&peak_bytes, memory_order_relaxed);
  while (live > peak)
    if (atomic_compare_exchange_weak (&peak_bytes, &peak, live))
      {
        peak_tsc = tsc;
        break;
      }
}

void
peak_note_free (struct depot_context *context, uint64_t size, uint32_t weight,
                uint64_t tsc)
{
  (void) context;
  if (!peak_enabled)
    return;
  copy_if_at_new_peak (tsc, false);
  sample_if_due (tsc);
  atomic_fetch_sub (&live_bytes, (int64_t) (size * weight));
}

/* ---- fork ---- */

void
peak_fork_prepare (void)
{
  spin_lock (&timeline_lock);
  spin_lock (&snapshot_lock);
}

void
peak_fork_release (void)
{
  spin_unlock (&snapshot_lock);
  spin_unlock (&timeline_lock);
}

/* ---- For the profile writer ---- */

struct collect
{
  struct memprof_extra_peak_context *contexts;
  size_t capacity, used;
};

static void
collect_context (struct depot_context *context, void *cookie)
{
  struct collect *collect = cookie;
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
  return peak_enabled ? depot_context_count () + 1 : 0;
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
  if (!peak_enabled)
    return;
  /* A program at its peak when the dump comes has not freed since.  */
  copy_if_at_new_peak (tsc, true);
  calibrate (0);

  /* A copy, with the dump's own sample last (not kept: the next dump
     takes another), times in microseconds.  Dumps are one at a time
     (profile.c's lock).  */
  spin_lock (&timeline_lock);
  memcpy (dump_timeline, timeline, timeline_count * sizeof *timeline);
  take_sample (&dump_timeline[timeline_count], tsc);
  peak->sample_count = timeline_count + 1;
  spin_unlock (&timeline_lock);
  for (size_t i = 0; i < peak->sample_count; i++)
    dump_timeline[i].time_us = us_of (dump_timeline[i].time_us);

  spin_lock (&snapshot_lock);
  peak->peak_bytes = (uint64_t) atomic_load (&peak_bytes);
  peak->peak_time_us = us_of (peak_tsc);
  peak->snapshot_bytes = (uint64_t) atomic_load (&snapshot_bytes);
  peak->snapshot_time_us = us_of (snapshot_tsc);
  /* The blocks at the peak: those of the walk (the same moment when
     exact).  */
  peak->peak_blocks = snapshot_blocks;
  struct collect collect = { contexts, context_capacity, 0 };
  depot_for_each (collect_context, &collect);
  spin_unlock (&snapshot_lock);
  peak->now_us = us_of (tsc);
  peak->context_count = collect.used;
  peak->sample_top = MEMPROF_EXTRA_SAMPLE_TOP;
  peak->sampled = runtime_options.sample_interval > 1;
}
