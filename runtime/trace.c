/* The malloc API trace: per-thread buffers and the public API
   (memprof_trace_*).  The writer thread, zstd and the file are in
   tracewriter.c.

   Buffers.  Each thread that makes a call appends 64-byte records to a
   chunk of its own (32 KiB of mmap'd memory, trace.h) with no lock: one
   atomic add for the global sequence number, one rdtsc, the record's
   stores, and a release store of the thread's record count.  A full
   chunk is handed to the writer's queue (under the thread's spin lock and
   the queue's mutex, once per 511 records) and replaced by a free one.
   The writer also takes the records of chunks that are not full, under
   the thread's spin lock, without stopping the thread: at a sync, at a
   reset, at the end, and when it finds the thread dead (tgkill (0) fails
   with ESRCH; its chunk and registry entry are then reused).

   Bounded memory.  The chunks queued and not yet written are at most
   trace_buffer_size bytes: a thread that hands a chunk over past that
   waits until the writer has written one.  Records are never dropped.
   Each thread also holds the chunk it is filling.

   No allocation.  Chunks, the registry of threads and zstd's memory all
   come from mmap; the writer thread runs with in_runtime set, so that
   nothing it does is recorded; the slow path sets in_runtime around the
   waits.  */

#define _GNU_SOURCE
#include "trace.h"
#include "memprof/interface.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "tracewriter.h"

_Atomic int trace_recording;
_Atomic int trace_watched;
bool trace_with_stacks;
_Atomic uint64_t trace_sequence = 1;
__thread struct trace_thread *trace_self
    __attribute__ ((tls_model ("initial-exec")));

struct trace_shared trace_shared = {
  .mutex = PTHREAD_MUTEX_INITIALIZER,
  .work = PTHREAD_COND_INITIALIZER,
  .space = PTHREAD_COND_INITIALIZER,
  .done = PTHREAD_COND_INITIALIZER,
};

/* Start, stop, pause: one at a time.  */
static pthread_mutex_t api_lock = PTHREAD_MUTEX_INITIALIZER;
static bool trace_on;     /* started and not stopped */
static bool trace_paused; /* memprof_trace_pause */

/* ---- The registry of threads ---- */

/* The most threads alive at once that can record.  */
#define TRACE_THREADS_MAX 65536
/* Chunks queued before an idle writer is woken (it wakes by itself every
   IDLE_WAKE_MS too).  */
#define WAKE_BATCH 8
/* Chunks mmap'd at once when the free list is empty.  */
#define CHUNKS_PER_MAP 32

static struct trace_thread *registry;
static _Atomic uint32_t registry_used;
static struct trace_thread *registry_free;
static spinlock_t registry_lock = SPINLOCK_INIT;
static _Atomic bool registry_full_reported;

static struct trace_thread *
register_thread (void)
{
  struct trace_thread *thread = NULL;

  spin_lock (&registry_lock);
  if (registry == NULL)
    registry = runtime_map (TRACE_THREADS_MAX * sizeof *registry);
  if (registry != NULL)
    {
      if (registry_free != NULL)
        {
          thread = registry_free;
          registry_free = thread->next_free;
        }
      else if (registry_used < TRACE_THREADS_MAX)
        thread = &registry[atomic_fetch_add (&registry_used, 1)];
    }
  if (thread != NULL)
    {
      thread->chunk = NULL;
      atomic_store (&thread->committed, 0);
      thread->taken = 0;
      thread->tid = (uint32_t) syscall (SYS_gettid);
      thread->wrote_any = false;
      thread->next_free = NULL;
      atomic_flag_clear (&thread->lock.flag);
      thread->in_use = true;
    }
  spin_unlock (&registry_lock);
  if (thread == NULL && !atomic_exchange (&registry_full_reported, true))
    log_printf ("trace: more than %d threads at once: the calls of the "
                "others are not recorded",
                TRACE_THREADS_MAX);
  return thread;
}

/* ---- Chunks ---- */

/* A free chunk, or NULL when no memory is left.  Takes the mutex.  */
static struct trace_chunk *
chunk_get (void)
{
  struct trace_chunk *chunk;

  pthread_mutex_lock (&trace_shared.mutex);
  if (trace_shared.free_chunks == NULL)
    {
      struct trace_chunk *batch
          = runtime_map (CHUNKS_PER_MAP * sizeof (struct trace_chunk));
      if (batch != NULL)
        for (int i = 0; i < CHUNKS_PER_MAP; i++)
          {
            batch[i].next = trace_shared.free_chunks;
            trace_shared.free_chunks = &batch[i];
          }
    }
  chunk = trace_shared.free_chunks;
  if (chunk != NULL)
    trace_shared.free_chunks = chunk->next;
  pthread_mutex_unlock (&trace_shared.mutex);
  return chunk;
}

/* With the mutex held.  */
static void
chunk_release_locked (struct trace_chunk *chunk)
{
  chunk->next = trace_shared.free_chunks;
  trace_shared.free_chunks = chunk;
}

void
trace_chunk_written (struct trace_chunk *chunk)
{
  pthread_mutex_lock (&trace_shared.mutex);
  chunk_release_locked (chunk);
  trace_shared.queued--;
  pthread_cond_broadcast (&trace_shared.space);
  pthread_mutex_unlock (&trace_shared.mutex);
}

/* Put THREAD's chunk, with its records not yet taken, on the writer's
   queue, and detach it.  With THREAD's lock held.  */
static void
queue_chunk_locked (struct trace_thread *thread)
{
  struct trace_chunk *chunk = thread->chunk;
  uint32_t committed = atomic_load (&thread->committed);

  thread->chunk = NULL;
  atomic_store (&thread->committed, 0);
  chunk->first = thread->taken;
  chunk->count = committed - thread->taken;
  thread->taken = 0;
  pthread_mutex_lock (&trace_shared.mutex);
  if (chunk->count == 0)
    chunk_release_locked (chunk);
  else
    {
      thread->wrote_any = true;
      chunk->next = NULL;
      if (trace_shared.queue_tail != NULL)
        trace_shared.queue_tail->next = chunk;
      else
        trace_shared.queue_head = chunk;
      trace_shared.queue_tail = chunk;
      trace_shared.queued++;
      /* Wake the writer for a batch, not for every chunk: each wake-up
         is a context switch when the program keeps the CPUs busy.  */
      if (trace_shared.writer_idle && trace_shared.queued >= WAKE_BATCH)
        pthread_cond_signal (&trace_shared.work);
    }
  pthread_mutex_unlock (&trace_shared.mutex);
}

/* Bounded memory: wait while the writer is behind.  Before the writer
   runs (start-up, before the library's constructor) nothing waits.  */
static void
wait_for_space (void)
{
  pthread_mutex_lock (&trace_shared.mutex);
  while (trace_shared.queued > trace_shared.queue_limit
         && trace_shared.writer_running)
    {
      trace_shared.waits++;
      pthread_cond_wait (&trace_shared.space, &trace_shared.mutex);
    }
  pthread_mutex_unlock (&trace_shared.mutex);
}

struct trace_thread *
trace_thread_for_append (void)
{
  struct trace_thread *self = trace_self;
  struct trace_chunk *fresh;

  in_runtime++;
  if (self == NULL)
    {
      self = register_thread ();
      trace_self = self;
      if (self == NULL)
        goto none;
    }
  if (self->chunk != NULL)
    {
      spin_lock (&self->lock);
      queue_chunk_locked (self);
      spin_unlock (&self->lock);
      wait_for_space ();
    }
  fresh = chunk_get ();
  if (fresh == NULL)
    goto none;
  fresh->thread = self->tid;
  char name[16] = { 0 };
  prctl (PR_GET_NAME, name);
  spin_lock (&self->lock);
  memcpy (self->name, name, sizeof name);
  self->chunk = fresh;
  atomic_store (&self->committed, 0);
  self->taken = 0;
  spin_unlock (&self->lock);
  in_runtime--;
  /* The trace may have stopped while this thread waited.  */
  return atomic_load (&trace_recording) ? self : NULL;
none:
  in_runtime--;
  return NULL;
}

/* ---- For the writer ---- */

bool
trace_thread_last_name (uint32_t tid, char *name)
{
  uint32_t used = atomic_load (&registry_used);
  for (uint32_t i = 0; i < used; i++)
    if (registry[i].tid == tid && registry[i].in_use)
      {
        /* Without the thread's lock: the writer calls this while
           trace_collect_threads holds it.  A name changing meanwhile
           may come out mixed; the next chunk writes it again.  */
        memcpy (name, registry[i].name, sizeof registry[i].name);
        name[sizeof registry[i].name - 1] = '\0';
        return name[0] != '\0';
      }
  return false;
}

uint32_t
trace_collect_threads (bool discard, bool only_dead,
                       void (*emit) (uint32_t tid,
                                     const struct memprof_trace_record *,
                                     uint32_t count))
{
  uint32_t used = atomic_load (&registry_used), with_records = 0;
  pid_t pid = getpid ();

  for (uint32_t i = 0; i < used; i++)
    {
      struct trace_thread *thread = &registry[i];
      bool dead;
      if (!thread->in_use)
        continue;
      dead = only_dead && syscall (SYS_tgkill, pid, (pid_t) thread->tid, 0) != 0
             && errno == ESRCH;
      if (only_dead && !dead)
        continue;
      spin_lock (&thread->lock);
      if (thread->chunk != NULL)
        {
          uint32_t committed
              = atomic_load_explicit (&thread->committed, memory_order_acquire);
          if (committed > thread->taken && !discard)
            {
              emit (thread->tid, &thread->chunk->records[thread->taken],
                    committed - thread->taken);
              thread->wrote_any = true;
            }
          thread->taken = committed;
        }
      if (discard)
        thread->wrote_any = false;
      if (dead)
        {
          if (thread->chunk != NULL)
            {
              pthread_mutex_lock (&trace_shared.mutex);
              chunk_release_locked (thread->chunk);
              pthread_mutex_unlock (&trace_shared.mutex);
              thread->chunk = NULL;
            }
          thread->in_use = false;
        }
      if (thread->wrote_any)
        with_records++;
      spin_unlock (&thread->lock);
      if (dead)
        {
          /* Counted in the end block's thread count by the writer.  */
          spin_lock (&registry_lock);
          thread->next_free = registry_free;
          registry_free = thread;
          spin_unlock (&registry_lock);
        }
    }
  return with_records;
}

/* ---- Life cycle ---- */

static void
read_clocks (void)
{
  struct timespec monotonic, realtime;
  clock_gettime (CLOCK_MONOTONIC, &monotonic);
  clock_gettime (CLOCK_REALTIME, &realtime);
  trace_shared.start_tsc = __builtin_ia32_rdtsc ();
  trace_shared.start_monotonic
      = (uint64_t) monotonic.tv_sec * 1000000000u + monotonic.tv_nsec;
  trace_shared.start_realtime
      = (uint64_t) realtime.tv_sec * 1000000000u + realtime.tv_nsec;
}

/* Set the trace up to record; the caller opens the file.  */
static void
prepare (void)
{
  long limit = runtime_options.trace_buffer_size / TRACE_CHUNK_SIZE;
  trace_shared.queue_limit = limit < 4 ? 4 : (size_t) limit;
  trace_with_stacks = runtime_options.trace_stacks;
  read_clocks ();
  trace_on = true;
  trace_paused = false;
}

static void
set_recording (void)
{
  bool on = trace_on && !trace_paused;
  /* The flag byte says somebody watches before the trace records and
     until it no longer does (trace_watched).  */
  if (on)
    {
      atomic_store (&trace_watched, true);
      allocator_observers_changed ();
    }
  atomic_store (&trace_recording, on);
  if (!on)
    {
      atomic_store (&trace_watched, false);
      allocator_observers_changed ();
    }
}

/* Forget every buffered record (the trace could not start).  */
static void
abandon (void)
{
  trace_on = false;
  set_recording ();
  pthread_mutex_lock (&trace_shared.mutex);
  while (trace_shared.queue_head != NULL)
    {
      struct trace_chunk *chunk = trace_shared.queue_head;
      trace_shared.queue_head = chunk->next;
      chunk_release_locked (chunk);
    }
  trace_shared.queue_tail = NULL;
  trace_shared.queued = 0;
  pthread_mutex_unlock (&trace_shared.mutex);
}

void
trace_initialize (void)
{
  if (!runtime_options.trace)
    return;
  prepare ();
  set_recording ();
}

/* With api_lock held: the writer runs, if the trace is on.  */
static int
ensure_writer (void)
{
  if (!trace_on || trace_shared.writer_running)
    return 0;
  if (trace_writer_open () == 0)
    return 0;
  abandon ();
  return -1;
}

void
trace_start_writer (void)
{
  pthread_mutex_lock (&api_lock);
  ensure_writer ();
  pthread_mutex_unlock (&api_lock);
}

void
trace_finish (void)
{
  pthread_mutex_lock (&api_lock);
  if (trace_on && ensure_writer () == 0)
    {
      trace_on = false;
      set_recording ();
      trace_writer_request (TRACE_REQUEST_STOP);
    }
  pthread_mutex_unlock (&api_lock);
}

void
trace_sync_for_dump (void)
{
  memprof_trace_sync ();
}

/* fork: the child does not trace (most children exec at once, and a
   trace of their few calls would be left behind half-written); the
   parent's trace goes on, with the parent's calls only.  The child may
   start a trace of its own with memprof_trace_start ().  */
void
trace_fork_prepare (void)
{
  pthread_mutex_lock (&api_lock);
  pthread_mutex_lock (&trace_shared.mutex);
  spin_lock (&registry_lock);
}

void
trace_fork_parent (void)
{
  spin_unlock (&registry_lock);
  pthread_mutex_unlock (&trace_shared.mutex);
  pthread_mutex_unlock (&api_lock);
}

void
trace_fork_child (void)
{
  spin_unlock (&registry_lock);
  pthread_mutex_unlock (&trace_shared.mutex);
  /* Every thread of the parent is gone: forget their buffers (the chunks
     they held are not reused) and the parent's queue.  */
  atomic_store (&registry_used, 0);
  registry_free = NULL;
  trace_self = NULL;
  trace_shared.writer_running = false;
  trace_writer_forget ();
  abandon ();
  pthread_mutex_unlock (&api_lock);
}

/* ---- The public API (memprof/interface.h) ---- */

MEMPROF_EXPORT int
memprof_trace_start (void)
{
  int status = 0;

  runtime_ensure_initialized ();
  if (runtime_state != RUNTIME_RUNNING)
    return -1;
  pthread_mutex_lock (&api_lock);
  if (!trace_on)
    {
      /* A call that raced with the last stop is not this trace's.  */
      trace_collect_threads (true, false, NULL);
      prepare ();
      status = ensure_writer ();
    }
  set_recording ();
  pthread_mutex_unlock (&api_lock);
  return status;
}

MEMPROF_EXPORT int
memprof_trace_stop (void)
{
  int status = -1;

  runtime_ensure_initialized ();
  pthread_mutex_lock (&api_lock);
  if (trace_on && ensure_writer () == 0)
    {
      trace_on = false;
      set_recording ();
      status = trace_writer_request (TRACE_REQUEST_STOP);
    }
  pthread_mutex_unlock (&api_lock);
  return status;
}

MEMPROF_EXPORT int
memprof_trace_pause (void)
{
  int status = -1;

  pthread_mutex_lock (&api_lock);
  if (trace_on)
    {
      trace_paused = true;
      set_recording ();
      status = 0;
    }
  pthread_mutex_unlock (&api_lock);
  return status;
}

MEMPROF_EXPORT int
memprof_trace_resume (void)
{
  int status = -1;

  pthread_mutex_lock (&api_lock);
  if (trace_on)
    {
      trace_paused = false;
      set_recording ();
      status = 0;
    }
  pthread_mutex_unlock (&api_lock);
  return status;
}

static int
request (unsigned kind)
{
  int status = -1;

  runtime_ensure_initialized ();
  pthread_mutex_lock (&api_lock);
  if (trace_on && ensure_writer () == 0)
    status = trace_writer_request (kind);
  pthread_mutex_unlock (&api_lock);
  return status;
}

MEMPROF_EXPORT int
memprof_trace_sync (void)
{
  return request (TRACE_REQUEST_SYNC);
}

MEMPROF_EXPORT int
memprof_trace_reset (void)
{
  return request (TRACE_REQUEST_RESET);
}
