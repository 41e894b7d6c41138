/* The malloc API trace's writer and reader, round trip: the runtime
   linked into this program traces calls made here (memprof_trace_start,
   stop), and analysis/trace/trace.c must read back exactly those calls, with
   their arguments, results, order and thread; the workload those calls
   make must pass the replay's strict check with the trace's curve; and a
   workload's operations must decode as they were encoded.  */

#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "memprof/interface.h"
#include "trace.h"
#include "unit.h"
#include "util.h"
#include "workload.h"

/* Every pointer goes here, so that no call is optimized away.  */
void *volatile trace_test_sink;
void *volatile trace_test_null; /* a free (NULL) GCC cannot drop */

/* Trace BODY into a fresh file; read it into TRACE.  */
static void
trace_calls (void (*body) (void), struct trace_file *trace)
{
  char path[] = "/tmp/memprof-unit-trace.XXXXXX", option[128], error[512];
  int fd = mkstemp (path);
  ck_assert_int_ge (fd, 0);
  close (fd);
  snprintf (option, sizeof option, "trace_file=%s", path);
  ck_assert_int_eq (memprof_set_option (option), 0);
  ck_assert_int_eq (memprof_trace_start (), 0);
  body ();
  ck_assert_int_eq (memprof_trace_stop (), 0);
  ck_assert_int_eq (memprof_trace_stop (), -1); /* nothing to stop */
  ck_assert_msg (trace_read (path, trace, error, sizeof error) == 0, "%s",
                 error);
  unlink (path);
}

static void
some_calls (void)
{
  void *a = malloc (30001);
  void *b = calloc (7, 30003);
  trace_test_sink = a;
  trace_test_sink = b;
  a = realloc (a, 30005);
  trace_test_sink = a;
  void *c = memalign (512, 30007);
  trace_test_sink = c;
  free (b);
  free (a);
  free (c);
  free (trace_test_null);
}

/* The calls of sizes 30000 to 30999 (the C library's are not), in order. */
static size_t
own_calls (const struct trace_file *trace, const struct trace_call **out,
           size_t max)
{
  size_t count = 0;
  uint64_t own[3] = { 0 };
  for (size_t i = 0; i < trace->call_count && count < max; i++)
    {
      const struct memprof_trace_record *r = &trace->calls[i].record;
      bool mine = r->size >= 30000 && r->size < 31000;
      for (int j = 0; j < 3; j++)
        mine = mine || (r->pointer != 0 && r->pointer == own[j]);
      if (!mine)
        continue;
      if (r->result != 0)
        for (int j = 0; j < 3; j++)
          if (own[j] == 0 || own[j] == r->pointer)
            {
              own[j] = r->result;
              break;
            }
      out[count++] = &trace->calls[i];
    }
  return count;
}

START_TEST (test_trace_round_trip)
{
  struct trace_file trace;
  const struct trace_call *calls[16];
  trace_calls (some_calls, &trace);
  ck_assert (trace.complete);
  ck_assert_uint_eq (trace.header.pid, (uint32_t) getpid ());
  size_t count = own_calls (&trace, calls, 16);
  ck_assert_uint_eq (count, 7);
  static const unsigned ops[7]
      = { MEMPROF_TRACE_MALLOC,   MEMPROF_TRACE_CALLOC, MEMPROF_TRACE_REALLOC,
          MEMPROF_TRACE_MEMALIGN, MEMPROF_TRACE_FREE,   MEMPROF_TRACE_FREE,
          MEMPROF_TRACE_FREE };
  for (size_t i = 0; i < count; i++)
    {
      ck_assert_uint_eq (calls[i]->record.op, ops[i]);
      ck_assert_uint_eq (calls[i]->thread, calls[0]->thread);
      if (i > 0)
        {
          ck_assert_uint_gt (calls[i]->record.sequence,
                             calls[i - 1]->record.sequence);
          ck_assert_uint_ge (calls[i]->record.timestamp,
                             calls[i - 1]->record.timestamp);
        }
    }
  const struct memprof_trace_record *m
      = &calls[0]->record,
      *c = &calls[1]->record, *r = &calls[2]->record, *a = &calls[3]->record;
  ck_assert_uint_eq (m->size, 30001);
  ck_assert_uint_ne (m->result, 0);
  ck_assert_uint_ge (m->usable, 30001);
  ck_assert_uint_eq (c->size, 30003);
  ck_assert_uint_eq (c->extra, 7);
  ck_assert_uint_eq (r->pointer, m->result);
  ck_assert_uint_eq (r->size, 30005);
  ck_assert_uint_lt (r->extra, r->sequence); /* the sequence before it */
  ck_assert_uint_gt (r->extra, c->sequence);
  ck_assert_uint_eq (a->extra, 512);
  ck_assert_uint_eq (a->result % 512, 0);
  ck_assert_uint_eq (calls[4]->record.pointer, c->result);
  ck_assert_uint_eq (calls[5]->record.pointer, r->result);
  ck_assert_uint_eq (calls[6]->record.pointer, a->result);
  trace_free (&trace);
}
END_TEST

static void
paused_calls (void)
{
  trace_test_sink = malloc (30100);
  ck_assert_int_eq (memprof_trace_pause (), 0);
  trace_test_sink = malloc (30200);
  ck_assert_int_eq (memprof_trace_resume (), 0);
  trace_test_sink = malloc (30300);
  ck_assert_int_eq (memprof_trace_sync (), 0);
}

START_TEST (test_trace_pause)
{
  struct trace_file trace;
  const struct trace_call *calls[16];
  trace_calls (paused_calls, &trace);
  size_t count = own_calls (&trace, calls, 16);
  ck_assert_uint_eq (count, 2);
  ck_assert_uint_eq (calls[0]->record.size, 30100);
  ck_assert_uint_eq (calls[1]->record.size, 30300);
  trace_free (&trace);
}
END_TEST

/* A free of a slot asks one flag byte (UNSAMPLED_UNWATCHED) whether the
   trace records, malloc asks trace_recording: a thread that sees the
   trace recording must see the byte say so.  Resumed, the byte must
   change before trace_recording, or a thread's malloc is recorded while
   the free of its block is not (the trace then hands an address out
   twice); paused, after it.  Another thread pauses and resumes while this
   one reads trace_recording, the byte and trace_recording again, and
   stops it now and then with a signal (as a preemption would) so that it
   stays between two stores long enough to be seen there; TOGGLE_GEN, odd
   inside a call, discards readings across a whole call.  */
extern _Atomic int trace_recording; /* runtime/trace.h's */
static _Atomic unsigned long toggle_gen;
static _Atomic int toggles_stop, observing;
static _Atomic unsigned long stalls;

static void
stall (int signal)
{
  (void) signal;
  stalls++;
  unsigned long long until = __builtin_ia32_rdtsc () + 40000;
  while (__builtin_ia32_rdtsc () < until)
    ;
}

static void *
toggle_trace (void *unused)
{
  (void) unused;
  while (!atomic_load (&observing))
    ;
  while (!atomic_load (&toggles_stop))
    {
      atomic_fetch_add (&toggle_gen, 1);
      memprof_trace_resume ();
      atomic_fetch_add (&toggle_gen, 1);
      atomic_fetch_add (&toggle_gen, 1);
      memprof_trace_pause ();
      atomic_fetch_add (&toggle_gen, 1);
    }
  return NULL;
}

static unsigned long resume_violations;

static void
toggled_calls (void)
{
  pthread_t toggler;
  struct sigaction action = { .sa_handler = stall }, old;
  sigemptyset (&action.sa_mask);
  ck_assert_int_eq (sigaction (SIGUSR1, &action, &old), 0);
  ck_assert_int_eq (memprof_trace_pause (), 0);
  resume_violations = 0;
  ck_assert_int_eq (pthread_create (&toggler, NULL, toggle_trace, NULL), 0);
  unsigned long sent = 0;
  atomic_store (&observing, 1);
  while (atomic_load (&stalls) < 1000 && resume_violations == 0)
    {
      /* One stall at a time, each at a moment the reads do not choose.  */
      if (atomic_load (&stalls) == sent)
        {
          sent++;
          pthread_kill (toggler, SIGUSR1);
        }
      unsigned long before = atomic_load (&toggle_gen);
      int recording = atomic_load (&trace_recording);
      unsigned char flags = atomic_load (&__memprof_unsampled_path);
      int still = atomic_load (&trace_recording);
      if (atomic_load (&toggle_gen) == before && recording && still
          && (flags & UNSAMPLED_UNWATCHED))
        resume_violations++;
    }
  atomic_store (&toggles_stop, 1);
  pthread_join (toggler, NULL);
  sigaction (SIGUSR1, &old, NULL);
}

START_TEST (test_trace_resume_watched)
{
  struct trace_file trace;
  trace_calls (toggled_calls, &trace);
  trace_free (&trace);
  ck_assert_msg (resume_violations == 0,
                 "%lu readings saw the trace recording and the flag byte "
                 "saying nobody watches",
                 resume_violations);
}
END_TEST

struct curve
{
  uint64_t points[64];
  size_t count;
  uint64_t last;
};

static void
model_point (void *cookie, const struct trace_call *call,
             const struct trace_step *step, uint64_t live)
{
  struct curve *curve = cookie;
  (void) step;
  if (live != curve->last && curve->count + 2 <= 64)
    {
      curve->points[curve->count++] = call->record.sequence;
      curve->points[curve->count++] = live;
    }
  curve->last = live;
}

static void
walk_point (void *cookie, uint64_t sequence, uint64_t live)
{
  struct curve *curve = cookie;
  if (curve->count + 2 <= 64)
    {
      curve->points[curve->count++] = sequence;
      curve->points[curve->count++] = live;
    }
}

START_TEST (test_trace_to_workload)
{
  struct trace_file trace;
  struct buffer file = { 0 };
  struct workload_conversion conversion;
  struct workload workload;
  struct curve from_trace = { { 0 }, 0, 0 }, from_workload = { { 0 }, 0, 0 };
  char error[512];
  uint64_t peak;

  trace_calls (some_calls, &trace);
  struct trace_model *model = trace_model_new (trace.thread_count);
  trace_model_run (model, &trace, model_point, &from_trace);
  ck_assert_msg (
      workload_from_trace (&trace, &file, &conversion, error, sizeof error)
          == 0,
      "%s", error);
  ck_assert_uint_eq (conversion.problems.null_frees, 1);
  ck_assert_msg (workload_open_buffer ((const uint8_t *) file.data, file.length,
                                       "unit.wl", &workload, error,
                                       sizeof error)
                     == 0,
                 "%s", error);
  ck_assert_msg (workload_walk (&workload, true, NULL, walk_point,
                                &from_workload, &peak, error, sizeof error)
                     == 0,
                 "%s", error);
  ck_assert_uint_eq (peak, trace_model_peak (model, NULL));
  ck_assert_uint_ge (peak, 30005 + 7 * 30003 + 30007);
  ck_assert_uint_eq (from_trace.count, from_workload.count);
  ck_assert_mem_eq (from_trace.points, from_workload.points,
                    from_trace.count * sizeof (uint64_t));
  workload_close (&workload);
  trace_model_free (model);
  buffer_free (&file);
  trace_free (&trace);
}
END_TEST

START_TEST (test_workload_ops_round_trip)
{
  static const struct workload_op ops[] = {
    { .code = MEMPROF_TRACE_MALLOC, .sequence = 5, .slot = 0, .size = 1 },
    { .code = MEMPROF_TRACE_CALLOC,
      .sequence = 9,
      .slot = 1,
      .size = 8,
      .count = 1000000 },
    { .code = WORKLOAD_WAIT, .wait_thread = 0, .wait_ops = 3 },
    { .code = MEMPROF_TRACE_REALLOC,
      .sequence = 9,
      .slot = 1,
      .size = UINT64_MAX },
    { .code = MEMPROF_TRACE_NEW_ARRAY,
      .flags = MEMPROF_TRACE_ALIGNED,
      .sequence = 1ULL << 40,
      .slot = 2,
      .size = 77,
      .alignment = 1u << 30 },
    { .code = MEMPROF_TRACE_DELETE_ARRAY,
      .flags = MEMPROF_TRACE_ALIGNED | MEMPROF_TRACE_SIZED,
      .sequence = (1ULL << 40) + 1,
      .slot = 2,
      .size = 77,
      .alignment = 1u << 30 },
    { .code = MEMPROF_TRACE_MEMALIGN,
      .sequence = UINT64_MAX,
      .slot = 3,
      .size = 3,
      .alignment = 4096 },
  };
  size_t count = sizeof ops / sizeof ops[0];
  struct buffer stream = { 0 };
  uint64_t previous = 0;
  for (size_t i = 0; i < count; i++)
    workload_encode_op (&stream, &ops[i], &previous);

  struct workload_thread thread = { .offset = 0, .size = stream.length };
  struct workload workload = { .data = (const uint8_t *) stream.data,
                               .size = stream.length,
                               .name = "ops",
                               .threads = &thread };
  workload.header.thread_count = 1;
  workload.header.slot_count = 4;
  struct workload_cursor cursor;
  struct workload_op op;
  char error[256];
  workload_cursor_init (&workload, 0, &cursor);
  for (size_t i = 0; i < count; i++)
    {
      ck_assert_int_eq (
          workload_next (&workload, &cursor, &op, error, sizeof error), 1);
      ck_assert_uint_eq (op.code, ops[i].code);
      if (op.code != WORKLOAD_WAIT)
        ck_assert_uint_eq (op.sequence, ops[i].sequence);
      ck_assert_uint_eq (op.slot, ops[i].slot);
      ck_assert_uint_eq (op.flags, ops[i].flags);
      ck_assert_uint_eq (op.size, ops[i].size);
      ck_assert_uint_eq (op.count, ops[i].count);
      ck_assert_uint_eq (op.alignment, ops[i].alignment);
      ck_assert_uint_eq (op.wait_ops, ops[i].wait_ops);
    }
  ck_assert_int_eq (
      workload_next (&workload, &cursor, &op, error, sizeof error), 0);
  /* Cut short, the last operation is refused with its offset.  */
  thread.size--;
  workload_cursor_init (&workload, 0, &cursor);
  int got;
  while ((got = workload_next (&workload, &cursor, &op, error, sizeof error))
         > 0)
    ;
  ck_assert_int_eq (got, -1);
  ck_assert_ptr_nonnull (strstr (error, "ops: byte"));
  buffer_free (&stream);
}
END_TEST

Suite *
trace_suite (void)
{
  Suite *suite = suite_create ("trace");
  TCase *round_trip = tcase_create ("round trip");
  tcase_add_test (round_trip, test_trace_round_trip);
  tcase_add_test (round_trip, test_trace_pause);
  tcase_add_test (round_trip, test_trace_to_workload);
  tcase_add_test (round_trip, test_workload_ops_round_trip);
  suite_add_tcase (suite, round_trip);
  /* A thousand stalls: signals take long to reach a busy thread on a
     loaded machine.  */
  TCase *watched = tcase_create ("watched");
  tcase_set_timeout (watched, 60);
  tcase_add_test (watched, test_trace_resume_watched);
  suite_add_tcase (suite, watched);
  return suite;
}
