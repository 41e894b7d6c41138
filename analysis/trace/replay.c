/* The replay, in the child process that preloads the allocator (see
   cmd_replay.c).  The replayer's own big arrays (slots, counters,
   samples) come from mmap, so that they stay out of the allocator's heap;
   what they cost is in the baseline RSS the report gives.

   Every byte of every block allocated is written after the call (not
   timed), as glibc's trace_run does and as the traced program did: an
   allocator's pages count in RSS only once touched, so a replay that
   never wrote would measure the allocator's own bookkeeping, not the
   memory the program needs (--no-write measures that).

   Measures: wall time from the release of the threads to the last join;
   cycles per call type from rdtsc before and after each call (nothing
   else inside); maximum RSS from getrusage (the whole process, the
   replayer and the mapped workload too) and the most anonymous resident
   bytes sampled (/proc/self/statm: resident - shared) every --interval
   ms by a thread of its own and, so that a short trace has a curve too,
   by each replay thread every 1/SAMPLES_PER_THREAD of its operations,
   with the live requested bytes summed from each thread's running count
   at that moment; ideal RSS, the most live requested bytes in the
   trace's order, from the curve: after the run, the workload's
   operations are walked again in the trace's order, counting only those
   that succeeded in the replay (workload_walk).  The heap's RSS is the
   most sampled anonymous RSS less the baseline before the replay; its
   ratio to the ideal RSS is what an allocator costs in memory.  */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "replay.h"
#include "traceformat.h"
#include "util.h"

/* ---- The allocator's functions ---- */

typedef void *(*malloc_fn) (size_t);
typedef void *(*calloc_fn) (size_t, size_t);
typedef void *(*realloc_fn) (void *, size_t);
typedef void (*free_fn) (void *);
typedef void *(*memalign_fn) (size_t, size_t);
typedef int (*posix_memalign_fn) (void **, size_t, size_t);
typedef void *(*valloc_fn) (size_t);
typedef void *(*new_fn) (size_t, const void *);
typedef void *(*new_aligned_fn) (size_t, size_t, const void *);
typedef void (*delete_fn) (void *);
typedef void (*delete_sized_fn) (void *, size_t);
typedef void (*delete_aligned_fn) (void *, size_t);
typedef void (*delete_sized_aligned_fn) (void *, size_t, size_t);

static struct
{
  malloc_fn malloc;
  calloc_fn calloc;
  realloc_fn realloc;
  free_fn free;
  void *(*aligned_alloc) (size_t, size_t);
  posix_memalign_fn posix_memalign;
  memalign_fn memalign;
  valloc_fn valloc, pvalloc;
  /* operator new: the nothrow forms, so that a failure is counted, not
     thrown; [0] new, [1] new[].  */
  new_fn new_plain[2];
  new_aligned_fn new_aligned[2];
  delete_fn delete_plain[2];
  delete_sized_fn delete_sized[2];
  delete_aligned_fn delete_aligned[2];
  delete_sized_aligned_fn delete_sized_aligned[2];
  const char *object; /* the file malloc comes from */
  char substituted[512];
} fns;

static const char nothrow_tag = 0;

/* FN's object is malloc's?  */
static bool
same_object (void *fn)
{
  Dl_info info;
  return fn != NULL && dladdr (fn, &info) != 0 && info.dli_fname != NULL
         && strcmp (info.dli_fname, fns.object) == 0;
}

static void *
lookup (const char *name, bool must_be_allocators)
{
  void *fn = dlsym (RTLD_DEFAULT, name);
  if (fn != NULL && must_be_allocators && !same_object (fn))
    {
      size_t used = strlen (fns.substituted);
      snprintf (fns.substituted + used, sizeof fns.substituted - used, "%s%s",
                used ? ", " : "", name);
      return NULL;
    }
  return fn;
}

static void
resolve (bool needs_cplusplus)
{
  Dl_info info;
  fns.malloc = (malloc_fn) dlsym (RTLD_DEFAULT, "malloc");
  fns.object = dladdr ((void *) fns.malloc, &info) && info.dli_fname
                   ? info.dli_fname
                   : "?";
  fns.calloc = (calloc_fn) dlsym (RTLD_DEFAULT, "calloc");
  fns.realloc = (realloc_fn) dlsym (RTLD_DEFAULT, "realloc");
  fns.free = (free_fn) dlsym (RTLD_DEFAULT, "free");
  fns.aligned_alloc = lookup ("aligned_alloc", true);
  fns.posix_memalign = (posix_memalign_fn) lookup ("posix_memalign", true);
  fns.memalign = (memalign_fn) lookup ("memalign", true);
  fns.valloc = (valloc_fn) lookup ("valloc", true);
  fns.pvalloc = (valloc_fn) lookup ("pvalloc", true);
  if (needs_cplusplus && dlsym (RTLD_DEFAULT, "_Znwm") == NULL)
    /* glibc alone: C++'s operators come from libstdc++, over malloc.  */
    dlopen ("libstdc++.so.6", RTLD_NOW | RTLD_GLOBAL);
  static const char *const news[2]
      = { "_ZnwmRKSt9nothrow_t", "_ZnamRKSt9nothrow_t" };
  static const char *const aligned_news[2]
      = { "_ZnwmSt11align_val_tRKSt9nothrow_t",
          "_ZnamSt11align_val_tRKSt9nothrow_t" };
  static const char *const deletes[2] = { "_ZdlPv", "_ZdaPv" };
  static const char *const sized[2] = { "_ZdlPvm", "_ZdaPvm" };
  static const char *const aligned[2]
      = { "_ZdlPvSt11align_val_t", "_ZdaPvSt11align_val_t" };
  static const char *const sized_aligned[2]
      = { "_ZdlPvmSt11align_val_t", "_ZdaPvmSt11align_val_t" };
  for (int i = 0; i < 2; i++)
    {
      fns.new_plain[i] = (new_fn) dlsym (RTLD_DEFAULT, news[i]);
      fns.new_aligned[i]
          = (new_aligned_fn) dlsym (RTLD_DEFAULT, aligned_news[i]);
      fns.delete_plain[i] = (delete_fn) dlsym (RTLD_DEFAULT, deletes[i]);
      fns.delete_sized[i] = (delete_sized_fn) dlsym (RTLD_DEFAULT, sized[i]);
      fns.delete_aligned[i]
          = (delete_aligned_fn) dlsym (RTLD_DEFAULT, aligned[i]);
      fns.delete_sized_aligned[i]
          = (delete_sized_aligned_fn) dlsym (RTLD_DEFAULT, sized_aligned[i]);
    }
}

/* An aligned block from whatever aligned entry point the allocator has
   (the replay never mixes allocators).  */
static void *
aligned_block (size_t alignment, size_t size)
{
  void *pointer = NULL;
  if (fns.memalign != NULL)
    return fns.memalign (alignment, size);
  if (fns.posix_memalign != NULL)
    return fns.posix_memalign (
               &pointer,
               alignment < sizeof (void *) ? sizeof (void *) : alignment, size)
                   == 0
               ? pointer
               : NULL;
  if (fns.aligned_alloc != NULL)
    return fns.aligned_alloc (alignment, size);
  return fns.malloc (size);
}

static void take_sample (void);

/* ---- The threads ---- */

struct replay_thread
{
  /* Written by the thread after each operation; read by the others.  */
  _Atomic uint64_t done;
  _Atomic int64_t live; /* its running sum of live requested bytes */
  char padding[64 - 16];
  /* The thread's own.  */
  pthread_t handle;
  uint32_t index;
  uint64_t calls[MEMPROF_TRACE_OP_COUNT];
  uint64_t cycles[MEMPROF_TRACE_OP_COUNT];
  uint64_t waits;
  uint64_t written; /* bytes written into its blocks */
  uint64_t *failed; /* operation indices, increasing */
  size_t failed_count, failed_capacity;
  size_t failed_cursor; /* for the walk after the run */
} __attribute__ ((aligned (64)));

static const struct workload *replayed;
static struct replay_thread *threads;
static void **slots;
static uint64_t *slot_sizes;
static _Atomic int go;
static long page_size;
static bool write_blocks;
static uint64_t bytes_written;

/* Samples each replay thread takes, evenly over its operations.  */
#define SAMPLES_PER_THREAD 250

static void *
map_zeroed (size_t bytes)
{
  void *memory = mmap (NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (memory == MAP_FAILED)
    die (1, "out of memory (mmap of %zu bytes)", bytes);
  return memory;
}

static void
note_failure (struct replay_thread *thread, uint64_t index)
{
  if (thread->failed_count == thread->failed_capacity)
    {
      thread->failed_capacity
          = thread->failed_capacity ? 2 * thread->failed_capacity : 64;
      thread->failed = xrealloc (thread->failed,
                                 thread->failed_capacity * sizeof (uint64_t));
    }
  thread->failed[thread->failed_count++] = index;
}

static void
wait_for (struct replay_thread *thread, uint32_t other, uint64_t ops)
{
  unsigned spins = 0;
  thread->waits++;
  while (atomic_load_explicit (&threads[other].done, memory_order_acquire)
         < ops)
    {
      if (++spins < 256)
        __builtin_ia32_pause ();
      else if (spins < 4096)
        sched_yield ();
      else
        {
          struct timespec pause = { 0, 20000 };
          nanosleep (&pause, NULL);
        }
    }
}

/* Run OP; false when the allocator failed it.  */
static bool
run_op (struct replay_thread *thread, const struct workload_op *op)
{
  void **slot = &slots[op->slot];
  void *result = NULL;
  uint64_t start, end;
  bool ok = true;
  int array = op->code == MEMPROF_TRACE_NEW_ARRAY
              || op->code == MEMPROF_TRACE_DELETE_ARRAY;

  start = __builtin_ia32_rdtsc ();
  switch (op->code)
    {
    case MEMPROF_TRACE_MALLOC:
      result = fns.malloc (op->size);
      break;
    case MEMPROF_TRACE_CALLOC:
      result = fns.calloc (op->count, op->size);
      break;
    case MEMPROF_TRACE_REALLOC:
      result = fns.realloc (*slot, op->size);
      break;
    case MEMPROF_TRACE_FREE:
      fns.free (*slot);
      break;
    case MEMPROF_TRACE_ALIGNED_ALLOC:
      result = fns.aligned_alloc ? fns.aligned_alloc (op->alignment, op->size)
                                 : aligned_block (op->alignment, op->size);
      break;
    case MEMPROF_TRACE_POSIX_MEMALIGN:
      if (fns.posix_memalign)
        {
          if (fns.posix_memalign (&result,
                                  op->alignment < sizeof (void *)
                                      ? sizeof (void *)
                                      : op->alignment,
                                  op->size)
              != 0)
            result = NULL;
        }
      else
        result = aligned_block (op->alignment, op->size);
      break;
    case MEMPROF_TRACE_MEMALIGN:
      result = aligned_block (op->alignment, op->size);
      break;
    case MEMPROF_TRACE_VALLOC:
      result = fns.valloc ? fns.valloc (op->size)
                          : aligned_block ((size_t) page_size, op->size);
      break;
    case MEMPROF_TRACE_PVALLOC:
      result = fns.pvalloc ? fns.pvalloc (op->size)
                           : aligned_block ((size_t) page_size,
                                            (op->size + page_size - 1)
                                                & ~((uint64_t) page_size - 1));
      break;
    case MEMPROF_TRACE_NEW:
    case MEMPROF_TRACE_NEW_ARRAY:
      if (op->flags & MEMPROF_TRACE_ALIGNED)
        result = fns.new_aligned[array]
                     ? fns.new_aligned[array](op->size, op->alignment,
                                              &nothrow_tag)
                     : aligned_block (op->alignment, op->size);
      else
        result = fns.new_plain[array]
                     ? fns.new_plain[array](op->size, &nothrow_tag)
                     : fns.malloc (op->size);
      break;
    case MEMPROF_TRACE_DELETE:
    case MEMPROF_TRACE_DELETE_ARRAY:
      {
        bool sized = op->flags & MEMPROF_TRACE_SIZED;
        bool aligned = op->flags & MEMPROF_TRACE_ALIGNED;
        bool from_new = aligned ? fns.new_aligned[array] != NULL
                                : fns.new_plain[array] != NULL;
        if (!from_new || fns.delete_plain[array] == NULL)
          fns.free (*slot);
        else if (sized && aligned && fns.delete_sized_aligned[array])
          fns.delete_sized_aligned[array](*slot, op->size, op->alignment);
        else if (aligned && fns.delete_aligned[array])
          fns.delete_aligned[array](*slot, op->alignment);
        else if (sized && !aligned && fns.delete_sized[array])
          fns.delete_sized[array](*slot, op->size);
        else
          fns.delete_plain[array](*slot);
      }
      break;
    }
  end = __builtin_ia32_rdtsc ();
  thread->calls[op->code]++;
  thread->cycles[op->code] += end - start;

  int64_t delta = 0;
  switch (op->code)
    {
    case MEMPROF_TRACE_FREE:
    case MEMPROF_TRACE_DELETE:
    case MEMPROF_TRACE_DELETE_ARRAY:
      *slot = NULL;
      delta = -(int64_t) slot_sizes[op->slot];
      slot_sizes[op->slot] = 0;
      break;
    case MEMPROF_TRACE_REALLOC:
      if (result == NULL && op->size != 0)
        ok = false;
      else
        {
          if (result != NULL && op->size == 0)
            {
              /* glibc's realloc (p, 0) frees p; others return a small
                 block, freed here (not timed) to keep the two alike.  */
              fns.free (result);
              result = NULL;
            }
          *slot = result;
          delta = (int64_t) op->size - (int64_t) slot_sizes[op->slot];
          slot_sizes[op->slot] = op->size;
        }
      break;
    default:
      if (result == NULL)
        ok = false;
      else
        {
          *slot = result;
          slot_sizes[op->slot] = workload_op_bytes (op);
          delta = (int64_t) slot_sizes[op->slot];
        }
      break;
    }
  atomic_store_explicit (
      &thread->live,
      atomic_load_explicit (&thread->live, memory_order_relaxed) + delta,
      memory_order_relaxed);
  if (write_blocks && result != NULL && delta != 0 && *slot == result)
    {
      /* The whole block, as the program would have; a realloc's too (its
         copy wrote the old part, the program the rest).  */
      memset (result, (int) (op->slot & 0xff) | 1, slot_sizes[op->slot]);
      thread->written += slot_sizes[op->slot];
    }
  return ok;
}

static void *
thread_main (void *cookie)
{
  struct replay_thread *thread = cookie;
  struct workload_cursor cursor;
  struct workload_op op;
  char error[512];
  uint64_t index = 0;
  int got;

  uint64_t stride
      = replayed->threads[thread->index].op_count / SAMPLES_PER_THREAD;
  if (stride == 0)
    stride = 1;
  workload_cursor_init (replayed, thread->index, &cursor);
  while (!atomic_load_explicit (&go, memory_order_acquire))
    __builtin_ia32_pause ();
  while ((got = workload_next (replayed, &cursor, &op, error, sizeof error))
         > 0)
    {
      if (op.code == WORKLOAD_WAIT)
        {
          wait_for (thread, op.wait_thread, op.wait_ops);
          continue;
        }
      if (!run_op (thread, &op))
        note_failure (thread, index);
      index++;
      atomic_store_explicit (&thread->done, index, memory_order_release);
      if (index % stride == 0)
        take_sample ();
    }
  if (got < 0)
    die (EXIT_BAD_INPUT, "%s", error); /* checked before: cannot happen */
  return NULL;
}

/* ---- Sampling ---- */

static struct replay_sample *samples;
static size_t sample_count, sample_capacity;
static _Atomic int sampling;
static struct timespec started;

static double
ms_since (const struct timespec *start)
{
  struct timespec now;
  clock_gettime (CLOCK_MONOTONIC, &now);
  return (double) (now.tv_sec - start->tv_sec) * 1e3
         + (double) (now.tv_nsec - start->tv_nsec) / 1e6;
}

/* Anonymous resident bytes: resident minus shared (file-backed) pages.  */
static uint64_t
anonymous_rss (void)
{
  char text[128];
  unsigned long long size, resident, shared;
  uint64_t bytes = 0;
  /* open and read, not stdio: the replayer allocates as little as it
     can while the allocator is measured.  */
  int fd = open ("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  ssize_t got = read (fd, text, sizeof text - 1);
  close (fd);
  if (got <= 0)
    return 0;
  text[got] = '\0';
  if (sscanf (text, "%llu %llu %llu", &size, &resident, &shared) == 3)
    bytes = (resident - (shared < resident ? shared : resident))
            * (uint64_t) page_size;
  return bytes;
}

/* Samples come from the sampling thread and from the replay threads.  */
static atomic_flag sample_lock = ATOMIC_FLAG_INIT;

static void
take_sample (void)
{
  uint32_t count = replayed->header.thread_count;
  int64_t live = 0;
  while (atomic_flag_test_and_set_explicit (&sample_lock, memory_order_acquire))
    __builtin_ia32_pause ();
  if (sample_count == sample_capacity)
    {
      size_t capacity = sample_capacity ? 2 * sample_capacity : 4096;
      struct replay_sample *grown = map_zeroed (capacity * sizeof *grown);
      if (sample_count > 0)
        {
          memcpy (grown, samples, sample_count * sizeof *grown);
          munmap (samples, sample_capacity * sizeof *grown);
        }
      samples = grown;
      sample_capacity = capacity;
    }
  for (uint32_t i = 0; i < count; i++)
    live += atomic_load_explicit (&threads[i].live, memory_order_relaxed);
  samples[sample_count].ms = ms_since (&started);
  samples[sample_count].rss = anonymous_rss ();
  samples[sample_count].live = live < 0 ? 0 : (uint64_t) live;
  sample_count++;
  atomic_flag_clear_explicit (&sample_lock, memory_order_release);
}

static void *
sampler_main (void *cookie)
{
  int interval_ms = *(int *) cookie;
  struct timespec pause
      = { interval_ms / 1000, (long) (interval_ms % 1000) * 1000000L };
  while (atomic_load (&sampling))
    {
      take_sample ();
      nanosleep (&pause, NULL);
    }
  return NULL;
}

/* ---- After the run ---- */

static bool
was_failed (void *cookie, uint32_t thread_index, uint64_t op_index)
{
  struct replay_thread *thread = &threads[thread_index];
  (void) cookie;
  while (thread->failed_cursor < thread->failed_count
         && thread->failed[thread->failed_cursor] < op_index)
    thread->failed_cursor++;
  return thread->failed_cursor < thread->failed_count
         && thread->failed[thread->failed_cursor] == op_index;
}

struct curve
{
  struct replay_curve_point *points;
  size_t count, capacity;
};

static void
keep_point (void *cookie, uint64_t sequence, uint64_t live)
{
  struct curve *curve = cookie;
  if (curve->count == curve->capacity)
    {
      size_t capacity = curve->capacity ? 2 * curve->capacity : 4096;
      struct replay_curve_point *grown = map_zeroed (capacity * sizeof *grown);
      if (curve->count > 0)
        {
          memcpy (grown, curve->points, curve->count * sizeof *grown);
          munmap (curve->points, curve->capacity * sizeof *grown);
        }
      curve->points = grown;
      curve->capacity = capacity;
    }
  curve->points[curve->count].sequence = sequence;
  curve->points[curve->count++].live = live;
}

static bool
workload_has_cplusplus (const struct workload *workload)
{
  char error[256];
  for (uint32_t i = 0; i < workload->header.thread_count; i++)
    {
      struct workload_cursor cursor;
      struct workload_op op;
      workload_cursor_init (workload, i, &cursor);
      while (workload_next (workload, &cursor, &op, error, sizeof error) > 0)
        if (op.code >= MEMPROF_TRACE_NEW)
          return true;
    }
  return false;
}

int
replay_run (const struct replay_options *options,
            const struct workload *workload)
{
  uint32_t count = workload->header.thread_count;
  uint64_t slot_count = workload->header.slot_count;
  pthread_t sampler;
  pthread_attr_t attributes;
  struct rusage usage;
  char error[1024], human[32];

  page_size = sysconf (_SC_PAGESIZE);
  write_blocks = !options->no_write;
  replayed = workload;
  resolve (workload_has_cplusplus (workload));
  threads = map_zeroed (count * sizeof *threads);
  slots = map_zeroed (slot_count * sizeof *slots);
  slot_sizes = map_zeroed (slot_count * sizeof *slot_sizes);
  uint64_t baseline = anonymous_rss ();

  pthread_attr_init (&attributes);
  pthread_attr_setstacksize (&attributes, 256 * 1024);
  for (uint32_t i = 0; i < count; i++)
    {
      threads[i].index = i;
      if (pthread_create (&threads[i].handle, &attributes, thread_main,
                          &threads[i])
          != 0)
        die (1, "cannot start replay thread %u of %u", i, count);
    }
  clock_gettime (CLOCK_MONOTONIC, &started);
  atomic_store (&sampling, 1);
  int interval = options->interval_ms;
  take_sample ();
  if (pthread_create (&sampler, &attributes, sampler_main, &interval) != 0)
    die (1, "cannot start the sampling thread");
  struct rusage before;
  getrusage (RUSAGE_SELF, &before);
  atomic_store_explicit (&go, 1, memory_order_release);
  for (uint32_t i = 0; i < count; i++)
    pthread_join (threads[i].handle, NULL);
  double wall_ms = ms_since (&started);
  atomic_store (&sampling, 0);
  pthread_join (sampler, NULL);
  take_sample ();
  pthread_attr_destroy (&attributes);
  getrusage (RUSAGE_SELF, &usage);

  struct curve curve = { NULL, 0, 0 };
  uint64_t ideal = 0;
  if (workload_walk (workload, false, was_failed, keep_point, &curve, &ideal,
                     error, sizeof error)
      != 0)
    die (EXIT_BAD_INPUT, "%s", error);

  uint64_t total_calls = 0, total_failed = 0, total_waits = 0;
  uint64_t calls[MEMPROF_TRACE_OP_COUNT] = { 0 };
  uint64_t cycles[MEMPROF_TRACE_OP_COUNT] = { 0 };
  uint64_t max_sampled = 0;
  for (uint32_t i = 0; i < count; i++)
    {
      for (int op = 0; op < MEMPROF_TRACE_OP_COUNT; op++)
        {
          calls[op] += threads[i].calls[op];
          cycles[op] += threads[i].cycles[op];
          total_calls += threads[i].calls[op];
        }
      total_failed += threads[i].failed_count;
      total_waits += threads[i].waits;
      bytes_written += threads[i].written;
    }
  for (size_t i = 0; i < sample_count; i++)
    if (samples[i].rss > max_sampled)
      max_sampled = samples[i].rss;
  double cpu
      = (double) (usage.ru_utime.tv_sec - before.ru_utime.tv_sec)
        + (double) (usage.ru_stime.tv_sec - before.ru_stime.tv_sec)
        + (double) (usage.ru_utime.tv_usec - before.ru_utime.tv_usec) / 1e6
        + (double) (usage.ru_stime.tv_usec - before.ru_stime.tv_usec) / 1e6;

  printf ("replay of %s with %s (malloc from %s)\n", options->workload,
          options->allocator, fns.object);
  if (fns.substituted[0] != '\0')
    printf ("  not in the allocator, replayed with its other aligned entry "
            "points: %s\n",
            fns.substituted);
  printf ("  threads           %u\n", count);
  printf ("  operations        %" PRIu64 " (failed %" PRIu64 ")\n", total_calls,
          total_failed);
  printf ("  waits             %" PRIu64 "\n", total_waits);
  printf ("  wall time         %.6f s\n", wall_ms / 1e3);
  printf ("  cpu time          %.6f s\n", cpu);
  printf ("  max RSS           %" PRIu64 " bytes (%s; getrusage, the whole "
          "process)\n",
          (uint64_t) usage.ru_maxrss * 1024,
          format_bytes ((double) usage.ru_maxrss * 1024, human, sizeof human));
  printf ("  max sampled RSS   %" PRIu64 " bytes (%s; anonymous, %zu samples: "
          "every %d ms and every 1/%d of each thread's operations)\n",
          max_sampled, format_bytes ((double) max_sampled, human, sizeof human),
          sample_count, options->interval_ms, SAMPLES_PER_THREAD);
  printf ("  baseline RSS      %" PRIu64 " bytes (%s; anonymous, before the "
          "replay)\n",
          baseline, format_bytes ((double) baseline, human, sizeof human));
  uint64_t heap_rss = max_sampled > baseline ? max_sampled - baseline : 0;
  printf ("  heap RSS          %" PRIu64 " bytes (%s; max sampled - "
          "baseline)\n",
          heap_rss, format_bytes ((double) heap_rss, human, sizeof human));
  printf ("  ideal RSS         %" PRIu64 " bytes (%s; the most live requested "
          "bytes, trace order)\n",
          ideal, format_bytes ((double) ideal, human, sizeof human));
  if (ideal > 0)
    printf ("  RSS / ideal       %.3f (heap RSS over ideal RSS)\n",
            (double) heap_rss / (double) ideal);
  printf ("  bytes written     %" PRIu64 " (%s)\n", bytes_written,
          write_blocks ? "every byte of every block allocated"
                       : "none: --no-write");
  printf ("  cycles per call   %-16s %12s %12s %16s\n", "call", "count", "mean",
          "total");
  for (int op = 1; op < MEMPROF_TRACE_OP_COUNT; op++)
    if (calls[op] != 0)
      {
        static const char *const names[MEMPROF_TRACE_OP_COUNT]
            = { "",       "malloc",        "calloc",         "realloc",
                "free",   "aligned_alloc", "posix_memalign", "memalign",
                "valloc", "pvalloc",       "reallocarray",   "new",
                "new[]",  "delete",        "delete[]" };
        printf ("                    %-16s %12" PRIu64 " %12.1f %16" PRIu64
                "\n",
                names[op], calls[op], (double) cycles[op] / (double) calls[op],
                cycles[op]);
      }
  fflush (stdout);

  if (options->csv != NULL
      && replay_write_csv (options->csv, samples, sample_count, curve.points,
                           curve.count, error, sizeof error)
             != 0)
    die (1, "%s", error);
  if (options->svg != NULL)
    {
      char title[512];
      snprintf (title, sizeof title, "%s with %s", options->workload,
                options->allocator);
      if (replay_write_svg (options->svg, title, samples, sample_count, ideal,
                            error, sizeof error)
          != 0)
        die (1, "%s", error);
    }
  return 0;
}
