/* clock_stamp (runtime/clock.h), the allocation path's reading: its
   milliseconds are CLOCK_MONOTONIC's, read exactly around it, whether
   the anchor covers the reading or not.  The inline path decides that
   with one unsigned comparison (tsc - anchor.tsc < anchor.ticks_life);
   an anchor ahead of the TSC or without a rate must send the reading to
   the slow path, not convert a wrapped difference.  */

#include <x86intrin.h>

#include "clock.h"
#include "internal.h"
#include "unit.h"

/* CLOCK_MONOTONIC's milliseconds since start-up, read exactly.  */
static uint32_t
exact_ms (void)
{
  return (uint32_t) (clock_exact_ns () / 1000000 - clock_start_ms);
}

/* ROUNDS stamps, each between two exact readings (a conversion through
   the anchor may be off by its drift, microseconds: one millisecond of
   slack at a boundary) and each TSC between two rdtsc.  */
static void
check_stamps (int rounds)
{
  for (int round = 0; round < rounds; round++)
    {
      uint32_t before = exact_ms ();
      uint64_t tsc_before = __rdtsc ();
      struct clock_stamp stamp = clock_stamp ();
      uint64_t tsc_after = __rdtsc ();
      uint32_t after = exact_ms ();
      ck_assert_msg (stamp.ms + 1 >= before && stamp.ms <= after + 1,
                     "stamp %u ms outside the exact readings %u..%u ms",
                     stamp.ms, before, after);
      ck_assert_msg (
          stamp.tsc >= tsc_before && stamp.tsc <= tsc_after,
          "stamp's TSC %llu outside %llu..%llu", (unsigned long long) stamp.tsc,
          (unsigned long long) tsc_before, (unsigned long long) tsc_after);
    }
}

/* The anchor as it is, to put back: a test leaves the clock as it found
   it (an anchor out of its life is renewed at the next reading).  */
struct saved_anchor
{
  uint64_t tsc, ns, rate, ticks_life;
};

static struct saved_anchor
save_anchor (void)
{
  struct saved_anchor saved
      = { atomic_load (&clock_anchor.tsc), atomic_load (&clock_anchor.ns),
          atomic_load (&clock_anchor.rate),
          atomic_load (&clock_anchor.ticks_life) };
  return saved;
}

/* Set the anchor's fields as renew_anchor does, under its sequence.  */
static void
set_anchor (struct saved_anchor anchor)
{
  atomic_fetch_add (&clock_anchor.sequence, 1);
  atomic_store (&clock_anchor.tsc, anchor.tsc);
  atomic_store (&clock_anchor.ns, anchor.ns);
  atomic_store (&clock_anchor.rate, anchor.rate);
  atomic_store (&clock_anchor.ticks_life, anchor.ticks_life);
  atomic_fetch_add (&clock_anchor.sequence, 1);
}

START_TEST (test_stamp_is_exact)
{
  check_stamps (10000);
}
END_TEST

/* An anchor whose TSC lies ahead of the reading (another thread renewed
   it after this thread's rdtsc): the difference wraps, and a reading
   converted from it would be years off.  */
START_TEST (test_stamp_anchor_ahead)
{
  check_stamps (10); /* an anchor with a rate, where the TSC is usable */
  struct saved_anchor saved = save_anchor (), ahead = saved;
  ahead.tsc = __rdtsc () + (1ULL << 40);
  if (ahead.rate == 0)
    ahead.rate = 1ULL << 32;
  if (ahead.ticks_life == 0)
    ahead.ticks_life = 1ULL << 30;
  uint32_t before = exact_ms ();
  set_anchor (ahead);
  struct clock_stamp stamp = clock_stamp ();
  set_anchor (saved);
  uint32_t after = exact_ms ();
  ck_assert_msg (stamp.ms + 1 >= before && stamp.ms <= after + 1,
                 "an anchor ahead of the TSC gave %u ms (exact: %u..%u ms)",
                 stamp.ms, before, after);
  check_stamps (10);
}
END_TEST

/* An anchor without a measured rate (ticks_life 0) converts nothing,
   even a TSC just after it.  */
START_TEST (test_stamp_anchor_without_rate)
{
  check_stamps (10);
  struct saved_anchor saved = save_anchor (), unmeasured = saved;
  uint32_t before = exact_ms ();
  unmeasured.tsc = __rdtsc ();
  unmeasured.ns = 0; /* converted, the reading would be 0 ns */
  unmeasured.rate = 0;
  unmeasured.ticks_life = 0;
  set_anchor (unmeasured);
  struct clock_stamp stamp = clock_stamp ();
  set_anchor (saved);
  uint32_t after = exact_ms ();
  ck_assert_msg (stamp.ms + 1 >= before && stamp.ms <= after + 1,
                 "an anchor without a rate gave %u ms (exact: %u..%u ms)",
                 stamp.ms, before, after);
  check_stamps (10);
}
END_TEST

/* The milliseconds of TSC converted through ANCHOR, as clock_stamp's
   conversion gives them.  */
static uint32_t
converted_ms (const struct saved_anchor *anchor, uint64_t tsc)
{
  struct anchor converting
      = { anchor->tsc, anchor->ns, anchor->rate, anchor->ticks_life };
  return (uint32_t) (anchor_convert (&converting, tsc) / 1000000
                     - (uint64_t) clock_start_ms);
}

/* The thread's millisecond span (clock_ms_span): every TSC across
   millisecond boundaries, at rates of whole and fractional nanoseconds a
   tick, gets the millisecond the conversion gives, as does a TSC before
   the span's start and one after the anchor was renewed with the same
   TSC (the sequence moved); a TSC beyond the anchor's life is not
   converted.  Anchors with a life long enough for this thread's and the
   others' real readings: one that covers none is renewed by the next.  */
START_TEST (test_stamp_span_is_exact)
{
  static const uint64_t rates[] = { 1ULL << 32, 3ULL << 31, 0x155555555ULL,
                                    0xaaaaaaabULL, 0x100000001ULL };
  struct saved_anchor saved = save_anchor ();

  for (size_t r = 0; r < sizeof rates / sizeof rates[0]; r++)
    {
      struct saved_anchor anchor = { __rdtsc (),
                                     (uint64_t) clock_start_ms * 1000000
                                         + 5000000000ULL + 999000ULL + r,
                                     rates[r], 1ULL << 40 };
      set_anchor (anchor);
      /* Every tick near a boundary, every 997th elsewhere.  */
      for (uint64_t tick = 0; tick < 3000000;
           tick += converted_ms (&anchor, anchor.tsc + tick + 3000)
                           != converted_ms (&anchor, anchor.tsc + tick)
                       ? 1
                       : 997)
        {
          uint64_t tsc = anchor.tsc + tick;
          uint32_t got = clock_stamp_at (tsc).ms;
          uint32_t want = converted_ms (&anchor, tsc);
          /* ck_assert allocates at every call (the check library's
             location record): through the runtime, that reading would
             set the span again from the real TSC.  */
          if (got != want)
            ck_abort_msg ("rate %#llx, tick %llu: %u ms, converted %u ms",
                          (unsigned long long) anchor.rate,
                          (unsigned long long) tick, got, want);
        }
      /* Back before the span's start.  */
      uint32_t before_start = clock_stamp_at (anchor.tsc + 10).ms;
      /* The same TSC through an anchor 7 ms later.  */
      clock_stamp_at (anchor.tsc + 20);
      struct saved_anchor later = anchor;
      later.ns += 7000000;
      set_anchor (later);
      uint32_t renewed = clock_stamp_at (anchor.tsc + 21).ms;
      ck_assert_uint_eq (before_start, converted_ms (&anchor, anchor.tsc + 10));
      ck_assert_uint_eq (renewed, converted_ms (&later, anchor.tsc + 21));
    }

  /* An anchor whose life ends 400 ticks before the next millisecond:
     the span ends with the life (a TSC beyond it must take the slow
     path).  The span is read before anything else reads the clock.  */
  struct saved_anchor short_lived
      = { __rdtsc (), (uint64_t) clock_start_ms * 1000000 + 999000ULL,
          1ULL << 32, 600 };
  set_anchor (short_lived);
  uint32_t got = clock_stamp_at (short_lived.tsc + 100).ms;
  uint64_t span_end = clock_ms_span.tsc_low + clock_ms_span.tsc_span;
  set_anchor (saved);
  ck_assert_uint_eq (got, converted_ms (&short_lived, short_lived.tsc + 100));
  ck_assert_uint_eq (span_end, short_lived.tsc + short_lived.ticks_life);
  check_stamps (10);
}
END_TEST

Suite *
clock_suite (void)
{
  Suite *suite = suite_create ("clock");
  TCase *stamps = tcase_create ("stamp");
  tcase_add_test (stamps, test_stamp_is_exact);
  tcase_add_test (stamps, test_stamp_anchor_ahead);
  tcase_add_test (stamps, test_stamp_anchor_without_rate);
  tcase_add_test (stamps, test_stamp_span_is_exact);
  suite_add_tcase (suite, stamps);
  return suite;
}
