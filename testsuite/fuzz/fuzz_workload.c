/* Fuzz target: the workload reader, what `memprof replay' checks before
   it runs anything: workload_open_buffer (header, thread table) and the
   strict workload_walk (every operation decodes; slots, threads and waits
   are in range; no wait can deadlock; no two threads use a slot without
   a wait between them).  An input that passes must also walk without
   STRICT to the same peak and curve, and decode operation by operation
   as the replay's threads decode it.  An input that fails must give a
   message naming it.  Seeds: corpus/workload, from `memprof trace2wl'.  */

#include "fuzz.h"
#include "workload.h"

static const char name[] = "fuzz.wl";

struct tally
{
  uint64_t points, last_live;
};

static void
count_point (void *cookie, uint64_t sequence, uint64_t live)
{
  struct tally *tally = cookie;
  (void) sequence;
  tally->points++;
  tally->last_live = live;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  struct workload workload;
  char error[512];
  struct tally strict = { 0, 0 }, lenient = { 0, 0 };
  uint64_t strict_peak = 0, lenient_peak = 0;

  error[0] = '\0';
  if (workload_open_buffer (data, size, name, &workload, error, sizeof error)
      != 0)
    {
      fuzz_check_error (error, name);
      return 0;
    }
  if (workload_walk (&workload, true, NULL, count_point, &strict, &strict_peak,
                     error, sizeof error)
      != 0)
    {
      fuzz_check_error (error, name);
      workload_close (&workload);
      return 0;
    }
  if (workload_walk (&workload, false, NULL, count_point, &lenient,
                     &lenient_peak, error, sizeof error)
      != 0)
    fuzz_fail ("passes the strict walk, fails the lenient one: %s", error);
  if (strict_peak != lenient_peak || strict.points != lenient.points
      || strict.last_live != lenient.last_live)
    fuzz_fail ("the two walks disagree: peak %llu and %llu",
               (unsigned long long) strict_peak,
               (unsigned long long) lenient_peak);
  uint64_t operations = 0;
  for (uint32_t i = 0; i < workload.header.thread_count; i++)
    {
      struct workload_cursor cursor;
      struct workload_op op;
      int got;
      workload_cursor_init (&workload, i, &cursor);
      while (
          (got = workload_next (&workload, &cursor, &op, error, sizeof error))
          > 0)
        if (op.code != WORKLOAD_WAIT)
          operations++;
      if (got < 0)
        fuzz_fail ("thread %u does not decode after the walk: %s", i, error);
    }
  if (operations != workload.header.op_count)
    fuzz_fail ("%llu operations decoded, the header says %llu",
               (unsigned long long) operations,
               (unsigned long long) workload.header.op_count);
  workload_close (&workload);
  return 0;
}
