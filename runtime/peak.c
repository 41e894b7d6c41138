/* The heap's high-water mark and its timeline: what the side file's
   version 3 section holds (extraformat.h, docs/profile-format.md).

   Every recorded allocation adds its requested bytes (times its weight
   under sampling) to its context's live count and to the process's; every
   free takes them away.  The peak is the highest process count seen, with
   its time.  What was live at the peak, per context, is copied from the
   contexts' live counts lazily, as DHAT does: at the first free after a
   new peak, while the heap is still at it, so a program that grows
   without freeing costs nothing more.  peak_tolerance bounds the copies:
   a new copy is taken only when the peak exceeds the last copy's bytes by
   more than that percentage, and the side file states the error (the
   peak's bytes minus the copy's).  0 copies at every new peak: exact.

   The timeline samples the live bytes, and the contexts holding the most
   of them, at most once per interval: the first allocation or free after
   an interval has passed records the heap as it was just before it, at
   the time of the event before it, so that the level a quiet period held
   is in the timeline whatever happened in the burst before.  It keeps TIMELINE_SLOTS samples:
   when they are full, each pair becomes the one with more bytes and the
   interval doubles, so a run of 50 ms and one of 5 hours both end with
   between TIMELINE_SLOTS / 2 and TIMELINE_SLOTS samples (fewer when the
   program allocates less often than the interval).  */

#include "internal.h"

#include <string.h>
#include <time.h>

/* Contexts that have had live blocks, walked by copies and samples.  */
#define PEAK_MAX_CONTEXTS (1UL << 22)
#define TIMELINE_SLOTS 512
#define TIMELINE_FIRST_INTERVAL_US 100

static bool peak_enabled;
static uint64_t start_ns;

static _Atomic int64_t live_bytes, live_blocks;
static _Atomic int64_t peak_bytes;
static uint64_t peak_blocks, peak_time_us;

/* The last copy of the contexts' live counts.  */
static spinlock_t snapshot_lock = SPINLOCK_INIT;
static _Atomic int64_t snapshot_bytes;
static uint64_t snapshot_time_us;

static struct depot_context *_Atomic *registry;
static _Atomic size_t registry_count;

static spinlock_t timeline_lock = SPINLOCK_INIT;
static struct memprof_extra_sample timeline[TIMELINE_SLOTS];
static size_t timeline_count;
static uint64_t timeline_interval_us = TIMELINE_FIRST_INTERVAL_US;
static _Atomic uint64_t timeline_next_us;
static _Atomic uint64_t last_event_us; /* of the last allocation or free */
static struct memprof_extra_sample dump_timeline[TIMELINE_SLOTS + 1];

static uint64_t
now_us (void)
{
  struct timespec now;
  clock_gettime (CLOCK_MONOTONIC, &now);
  return ((uint64_t) now.tv_sec * 1000000000u + (uint64_t) now.tv_nsec
          - start_ns)
         / 1000;
}

void
peak_start (void)
{
  struct timespec now;
  clock_gettime (CLOCK_MONOTONIC, &now);
  start_ns = (uint64_t) now.tv_sec * 1000000000u + (uint64_t) now.tv_nsec;
  peak_enabled = runtime_options.peak;
  if (peak_enabled)
    registry = runtime_map (PEAK_MAX_CONTEXTS * sizeof *registry);
  if (registry == NULL)
    peak_enabled = false;
}

/* The bytes a copy may lag the peak by.  */
static int64_t
tolerance (int64_t peak)
{
  return peak / 100 * (int64_t) runtime_options.peak_tolerance;
}

static void
register_context (struct depot_context *context)
{
  uint32_t expected = 0;
  if (atomic_load_explicit (&context->peak.registered, memory_order_relaxed)
      || !atomic_compare_exchange_strong (&context->peak.registered, &expected,
                                          1))
    return;
  size_t slot = atomic_fetch_add (&registry_count, 1);
  if (slot < PEAK_MAX_CONTEXTS)
    atomic_store_explicit (&registry[slot], context, memory_order_release);
}

static size_t
registered (void)
{
  size_t count = atomic_load (&registry_count);
  return count < PEAK_MAX_CONTEXTS ? count : PEAK_MAX_CONTEXTS;
}

static uint64_t
positive (int64_t value)
{
  return value > 0 ? (uint64_t) value : 0;
}

/* Copy every context's live counts as the breakdown of the peak; LIVE is
   the process's live bytes now.  Called with snapshot_lock held.  */
static void
copy_live_counts (int64_t live, uint64_t time_us)
{
  size_t count = registered ();
  for (size_t i = 0; i < count; i++)
    {
      struct depot_context *context
          = atomic_load_explicit (&registry[i], memory_order_acquire);
      if (context == NULL)
        continue;
      context->peak.peak_bytes = positive (atomic_load_explicit (
          &context->peak.live_bytes, memory_order_relaxed));
      context->peak.peak_blocks = positive (atomic_load_explicit (
          &context->peak.live_blocks, memory_order_relaxed));
    }
  atomic_store (&snapshot_bytes, live);
  snapshot_time_us = time_us;
}

/* Copy the breakdown when the heap is (within the tolerance) at a peak
   the last copy is too far below.  */
static void
copy_if_at_new_peak (uint64_t time_us)
{
  int64_t peak = atomic_load_explicit (&peak_bytes, memory_order_relaxed);
  int64_t slack = tolerance (peak);
  if (peak <= atomic_load_explicit (&snapshot_bytes, memory_order_relaxed)
                  + slack
      || atomic_load_explicit (&live_bytes, memory_order_relaxed) + slack
             < peak)
    return;
  spin_lock (&snapshot_lock);
  int64_t live = atomic_load (&live_bytes);
  if (peak > atomic_load (&snapshot_bytes) + slack && live + slack >= peak)
    copy_live_counts (live, time_us);
  spin_unlock (&snapshot_lock);
}

/* ---- The timeline ---- */

static void
take_sample (struct memprof_extra_sample *sample, uint64_t time_us)
{
  memset (sample, 0, sizeof *sample);
  sample->time_us = time_us;
  sample->live_bytes = positive (atomic_load (&live_bytes));
  sample->live_blocks = positive (atomic_load (&live_blocks));
  size_t count = registered ();
  for (size_t i = 0; i < count; i++)
    {
      struct depot_context *context
          = atomic_load_explicit (&registry[i], memory_order_acquire);
      if (context == NULL)
        continue;
      uint64_t bytes = positive (atomic_load_explicit (
          &context->peak.live_bytes, memory_order_relaxed));
      if (bytes == 0
          || bytes <= sample->top[MEMPROF_EXTRA_SAMPLE_TOP - 1].bytes)
        continue;
      /* Insert, largest first.  */
      int at = MEMPROF_EXTRA_SAMPLE_TOP - 1;
      while (at > 0 && sample->top[at - 1].bytes < bytes)
        {
          sample->top[at] = sample->top[at - 1];
          at--;
        }
      sample->top[at].stack_id = context->id;
      sample->top[at].bytes = bytes;
    }
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
  timeline_interval_us *= 2;
}

/* Before an allocation or free at TIME_US changes the heap.  */
static void
sample_if_due (uint64_t time_us)
{
  uint64_t before = atomic_exchange_explicit (&last_event_us, time_us,
                                              memory_order_relaxed);
  if (time_us < atomic_load_explicit (&timeline_next_us, memory_order_relaxed)
      || atomic_flag_test_and_set_explicit (&timeline_lock.flag,
                                            memory_order_acquire))
    return;
  if (time_us >= atomic_load (&timeline_next_us))
    {
      if (timeline_count == TIMELINE_SLOTS)
        compact_timeline ();
      take_sample (&timeline[timeline_count++], before);
      atomic_store (&timeline_next_us, time_us + timeline_interval_us);
    }
  spin_unlock (&timeline_lock);
}

/* ---- From the allocator ---- */

void
peak_note_allocation (struct depot_context *context, uint64_t size,
                      uint32_t weight)
{
  if (!peak_enabled)
    return;
  int64_t bytes = (int64_t) (size * weight);
  uint64_t time_us = now_us ();
  register_context (context);
  sample_if_due (time_us);
  atomic_fetch_add_explicit (&context->peak.live_bytes, bytes,
                             memory_order_relaxed);
  atomic_fetch_add_explicit (&context->peak.live_blocks, weight,
                             memory_order_relaxed);
  int64_t live = atomic_fetch_add (&live_bytes, bytes) + bytes;
  int64_t blocks = atomic_fetch_add (&live_blocks, weight) + weight;
  int64_t peak = atomic_load_explicit (&peak_bytes, memory_order_relaxed);
  while (live > peak)
    if (atomic_compare_exchange_weak (&peak_bytes, &peak, live))
      {
        peak_blocks = (uint64_t) blocks;
        peak_time_us = time_us;
        break;
      }
}

void
peak_note_free (struct depot_context *context, uint64_t size, uint32_t weight)
{
  if (!peak_enabled)
    return;
  int64_t bytes = (int64_t) (size * weight);
  uint64_t time_us = now_us ();
  copy_if_at_new_peak (time_us);
  sample_if_due (time_us);
  atomic_fetch_sub_explicit (&context->peak.live_bytes, bytes,
                             memory_order_relaxed);
  atomic_fetch_sub_explicit (&context->peak.live_blocks, weight,
                             memory_order_relaxed);
  atomic_fetch_sub (&live_bytes, bytes);
  atomic_fetch_sub (&live_blocks, weight);
}

/* ---- For the profile writer ---- */

size_t
peak_context_capacity (void)
{
  return peak_enabled ? registered () : 0;
}

void
peak_collect (struct memprof_extra_peak *peak,
              struct memprof_extra_peak_context *contexts,
              size_t context_capacity,
              const struct memprof_extra_sample **samples)
{
  uint64_t time_us = now_us ();
  memset (peak, 0, sizeof *peak);
  *samples = dump_timeline;
  if (!peak_enabled)
    return;
  /* A program at its peak when the dump comes has not freed since.  */
  copy_if_at_new_peak (time_us);
  /* A copy, with the dump's own sample last (not kept: the next dump
     takes another).  Dumps are one at a time (profile.c's lock).  */
  spin_lock (&timeline_lock);
  memcpy (dump_timeline, timeline, timeline_count * sizeof *timeline);
  take_sample (&dump_timeline[timeline_count], time_us);
  peak->sample_count = timeline_count + 1;
  spin_unlock (&timeline_lock);

  spin_lock (&snapshot_lock);
  peak->peak_bytes = positive (atomic_load (&peak_bytes));
  peak->peak_blocks = peak_blocks;
  peak->peak_time_us = peak_time_us;
  peak->snapshot_bytes = positive (atomic_load (&snapshot_bytes));
  peak->snapshot_time_us = snapshot_time_us;
  size_t count = registered (), used = 0;
  for (size_t i = 0; i < count && used < context_capacity; i++)
    {
      struct depot_context *context
          = atomic_load_explicit (&registry[i], memory_order_acquire);
      if (context == NULL || context->peak.peak_bytes == 0)
        continue;
      contexts[used].stack_id = context->id;
      contexts[used].bytes = context->peak.peak_bytes;
      contexts[used].blocks = context->peak.peak_blocks;
      used++;
    }
  spin_unlock (&snapshot_lock);
  peak->now_us = time_us;
  peak->context_count = used;
  peak->sample_top = MEMPROF_EXTRA_SAMPLE_TOP;
  peak->sampled = runtime_options.sample_interval > 1;
}
