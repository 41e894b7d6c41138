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

Suite *
clock_suite (void)
{
  Suite *suite = suite_create ("clock");
  TCase *stamps = tcase_create ("stamp");
  tcase_add_test (stamps, test_stamp_is_exact);
  tcase_add_test (stamps, test_stamp_anchor_ahead);
  tcase_add_test (stamps, test_stamp_anchor_without_rate);
  suite_add_tcase (suite, stamps);
  return suite;
}
