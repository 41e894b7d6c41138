/* Profiling modules (include/memprof/module.h, docs/modules.md): loading
   the module named by the `module' option, the event queue, and the
   backend thread that runs the module's code.

   The queue.  EVENT_BUFFERS buffers of EVENTS_PER_BUFFER events, mmap'd
   once when the module is loaded.  A thread appends to a buffer of its
   own (current_buffer) with no lock and no atomic; a full buffer goes to
   the full list and the thread takes a free one, waiting for the backend
   when none is free (events are never dropped while the module runs).
   The backend thread takes full buffers in order and calls the module's
   handle on each, then returns it to the free list.  A thread's partial
   buffer goes to the backend when the thread exits (a pthread key's
   destructor) and at the process's exit.

   The module's code runs only on the backend thread, and always with
   in_runtime set there: what it allocates is neither recorded in the
   heap profile nor shown to it as an event.  A fault in its code
   (SIGSEGV, SIGBUS, SIGFPE, SIGILL on that thread) jumps back out of the
   handler and switches the module off; the same signals on any other
   thread go to the handler that was there before (or to the default
   action, re-raised), as if the module were not there.

   Workers (module ABI version 2, docs/modules.md): with N > 1 workers,
   each full buffer goes to every worker's queue (its next[] link of that
   worker) and back to the free list when the last one is done with it
   (pending); a worker hands its module state only the load and store
   events of the addresses it owns (partition_shift) and every other
   event.  Worker 0 runs init before the others start, and at the end
   waits for them, then calls merge and finish.  A fault on any worker
   switches the module off for all.

   Exit: a destructor of priority 101 (after the program's destructors
   and atexit handlers) stops the queue, sends every partial buffer to the
   backend, and waits for it to call the module's finish.  */

#define _GNU_SOURCE
#include "internal.h"
#include "events.h"
#include "memprof/module.h"

#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>

/* 8192 events of 40 bytes: 320 KiB a buffer, 10 MiB in all.  */
#define EVENTS_PER_BUFFER 8192
#define EVENT_BUFFERS 32
/* The backend thread's stack for the fault handler.  */
#define SIGNAL_STACK_SIZE (64 * 1024)
/* The most backend workers (the option module_workers' maximum).  */
#define WORKERS_MAX 16
#define DEFAULT_PARTITION_SHIFT 12

struct event_buffer
{
  /* next[0] in the free list; next[W] in worker W's full list.  */
  struct event_buffer *next[WORKERS_MAX];
  uint32_t pending; /* the workers yet to handle it */
  uint32_t count;
  uint32_t thread;
  bool filling; /* a thread's current buffer */
  struct memprof_event events[EVENTS_PER_BUFFER];
};

_Atomic bool events_want_allocations;
/* The MEMPROF_EVENT_BITs delivered: 0 without a module, or once it is
   switched off.  */
static _Atomic uint32_t events_wanted;

static const struct memprof_module *module;
static struct event_buffer *buffers;

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_has_full = PTHREAD_COND_INITIALIZER;
static pthread_cond_t queue_has_free = PTHREAD_COND_INITIALIZER;
static pthread_cond_t module_started = PTHREAD_COND_INITIALIZER;
static struct event_buffer *free_list;
static bool stopping;

struct worker
{
  struct event_buffer *full_head, *full_tail;
  pthread_t thread;
  void *state;                  /* the module's, from worker_start */
  struct memprof_event *events; /* its share of a buffer (N > 1) */
};
static struct worker workers[WORKERS_MAX];
static unsigned worker_count = 1;
static unsigned partition_shift = DEFAULT_PARTITION_SHIFT;
/* worker_start, worker_handle and merge are called (else handle).  */
static bool worker_mode;
static _Atomic bool module_alive = true;
static int start_result; /* 0 while init runs, 1 accepted, -1 refused */

static pthread_t backend;
static bool backend_running;
static pthread_key_t thread_exit_key;
static _Atomic uint32_t threads_seen;
static uint64_t events_delivered;

static __thread struct event_buffer *current_buffer
    __attribute__ ((tls_model ("initial-exec")));
static __thread uint32_t thread_number
    __attribute__ ((tls_model ("initial-exec")));

/* ---- The queue ---- */

static void
push_full (struct event_buffer *buffer)
{
  buffer->filling = false;
  buffer->pending = worker_count;
  for (unsigned w = 0; w < worker_count; w++)
    {
      struct worker *worker = &workers[w];
      buffer->next[w] = NULL;
      if (worker->full_tail)
        worker->full_tail->next[w] = buffer;
      else
        worker->full_head = buffer;
      worker->full_tail = buffer;
    }
  if (worker_count > 1)
    pthread_cond_broadcast (&queue_has_full);
  else
    pthread_cond_signal (&queue_has_full);
}

/* Hand in FULL (null for none) and return a fresh buffer for this
   thread, or null once the queue is stopping.  */
static struct event_buffer *
exchange_buffer (struct event_buffer *full)
{
  struct event_buffer *fresh = NULL;

  in_runtime++;
  if (thread_number == 0)
    thread_number = atomic_fetch_add (&threads_seen, 1) + 1;
  pthread_mutex_lock (&queue_lock);
  if (full != NULL)
    push_full (full);
  while (!stopping && free_list == NULL)
    pthread_cond_wait (&queue_has_free, &queue_lock);
  if (!stopping)
    {
      fresh = free_list;
      free_list = fresh->next[0];
      fresh->count = 0;
      fresh->thread = thread_number;
      fresh->filling = true;
    }
  pthread_mutex_unlock (&queue_lock);
  current_buffer = fresh;
  /* Its value only has to be non-null for the destructor to run; set
     again when a later destructor of the exiting thread made events
     (glibc then runs the destructors once more).  */
  if (fresh != NULL && pthread_getspecific (thread_exit_key) == NULL)
    pthread_setspecific (thread_exit_key, &thread_number);
  in_runtime--;
  return fresh;
}

static inline void
append (uint32_t kind, uint64_t address, uint64_t size, uint64_t site,
        uint64_t value)
{
  struct event_buffer *buffer = current_buffer;
  struct memprof_event *event;

  if (UNLIKELY (in_runtime))
    return;
  if (UNLIKELY (buffer == NULL || buffer->count == EVENTS_PER_BUFFER))
    {
      buffer = exchange_buffer (buffer);
      if (buffer == NULL)
        return;
    }
  event = &buffer->events[buffer->count];
  event->kind = kind;
  event->thread = buffer->thread;
  event->address = address;
  event->size = size;
  event->site = site;
  event->value = value;
  buffer->count++;
}

/* A thread exits: its partial buffer goes to the backend.  */
static void
thread_exits (void *unused)
{
  (void) unused;
  if (current_buffer == NULL)
    return;
  in_runtime++;
  pthread_mutex_lock (&queue_lock);
  if (current_buffer->filling)
    push_full (current_buffer);
  pthread_mutex_unlock (&queue_lock);
  current_buffer = NULL;
  in_runtime--;
}

/* ---- Running the module's code, guarded ---- */

static __thread sigjmp_buf *fault_jump
    __attribute__ ((tls_model ("initial-exec")));
static const int guarded_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL };
#define GUARDED_SIGNALS (sizeof guarded_signals / sizeof guarded_signals[0])
static struct sigaction previous_actions[GUARDED_SIGNALS];

static void
fault_handler (int signal_number, siginfo_t *info, void *context)
{
  size_t i;

  if (fault_jump != NULL)
    siglongjmp (*fault_jump, signal_number);
  /* Not the module's: what was there before us decides.  */
  for (i = 0; i < GUARDED_SIGNALS; i++)
    if (guarded_signals[i] == signal_number)
      break;
  if (i == GUARDED_SIGNALS)
    return;
  if (previous_actions[i].sa_flags & SA_SIGINFO)
    previous_actions[i].sa_sigaction (signal_number, info, context);
  else if (previous_actions[i].sa_handler == SIG_DFL)
    {
      /* A fault happens again on return, now with the default action;
         a signal sent with kill is raised again.  */
      sigaction (signal_number, &previous_actions[i], NULL);
      if (info->si_code <= 0)
        raise (signal_number);
    }
  else if (previous_actions[i].sa_handler != SIG_IGN)
    previous_actions[i].sa_handler (signal_number);
}

static void
install_fault_handlers (void)
{
  struct sigaction action;
  memset (&action, 0, sizeof action);
  action.sa_sigaction = fault_handler;
  /* On the backend thread's own signal stack, so that a module that
     overflows its stack is caught too.  */
  action.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
  sigemptyset (&action.sa_mask);
  for (size_t i = 0; i < GUARDED_SIGNALS; i++)
    sigaction (guarded_signals[i], &action, &previous_actions[i]);
}

/* No more events are recorded.  */
static void
stop_events (void)
{
  atomic_store (&events_wanted, 0);
  atomic_store (&events_want_allocations, false);
  allocator_observers_changed ();
}

/* Nor handled.  */
static void
switch_module_off (void)
{
  atomic_store (&module_alive, false);
  stop_events ();
}

enum module_call
{
  CALL_INIT,
  CALL_HANDLE,
  CALL_FINISH,
  CALL_WORKER_START,
  CALL_WORKER_HANDLE,
  CALL_MERGE
};

static const char *const module_call_names[]
    = { "init", "handle", "finish", "worker_start", "worker_handle", "merge" };

/* Whether the access of SIZE bytes at ADDRESS touches a granule of worker
   W.  */
static bool
worker_touches (uint64_t address, uint64_t size, unsigned w)
{
  uint64_t first = address >> partition_shift;
  uint64_t last = (address + (size ? size - 1 : 0)) >> partition_shift;
  if (last - first + 1 >= worker_count)
    return true;
  for (uint64_t g = first; g <= last; g++)
    if (g % worker_count == w)
      return true;
  return false;
}

/* Worker W's share of BUFFER, into its events; the count.  */
static size_t
select_events (const struct event_buffer *buffer, unsigned w)
{
  struct memprof_event *out = workers[w].events;
  size_t n = 0;
  for (uint32_t i = 0; i < buffer->count; i++)
    {
      const struct memprof_event *e = &buffer->events[i];
      if ((e->kind == MEMPROF_EVENT_LOAD || e->kind == MEMPROF_EVENT_STORE)
          && !worker_touches (e->address, e->size, w))
        continue;
      out[n++] = *e;
    }
  return n;
}

/* Call the module's WHAT on worker W (with BUFFER's events for
   CALL_HANDLE and CALL_WORKER_HANDLE); false, with the module switched
   off, when it faulted.  *RESULT gets init's result.  */
static bool
call_module (enum module_call what, unsigned w,
             const struct event_buffer *buffer, int *result)
{
  sigjmp_buf jump;
  int signal_number = sigsetjmp (jump, 1);

  if (signal_number != 0)
    {
      fault_jump = NULL;
      switch_module_off ();
      log_printf ("module %s: signal %d (%s) in its %s; the module is "
                  "switched off, the program goes on",
                  module->name ? module->name : "?", signal_number,
                  strsignal (signal_number), module_call_names[what]);
      return false;
    }
  fault_jump = &jump;
  if (what == CALL_INIT)
    *result = module->init ? module->init (runtime_options.module_args) : 0;
  else if (what == CALL_HANDLE)
    module->handle (buffer->events, buffer->count);
  else if (what == CALL_WORKER_START)
    workers[w].state
        = module->worker_start ? module->worker_start (w, worker_count) : NULL;
  else if (what == CALL_WORKER_HANDLE)
    {
      size_t n = select_events (buffer, w);
      if (n > 0)
        module->worker_handle (workers[w].state, workers[w].events, n);
    }
  else if (what == CALL_MERGE)
    {
      void *states[WORKERS_MAX];
      for (unsigned i = 0; i < worker_count; i++)
        states[i] = workers[i].state;
      if (module->merge)
        module->merge (states, worker_count);
    }
  else if (module->finish)
    module->finish ();
  fault_jump = NULL;
  return true;
}

/* ---- The backend thread ---- */

static void
announce_start (int result)
{
  pthread_mutex_lock (&queue_lock);
  start_result = result;
  pthread_cond_broadcast (&module_started);
  pthread_mutex_unlock (&queue_lock);
}

/* The calls of a backend thread: its signals and its signal stack.  */
static void
backend_thread_setup (void)
{
  sigset_t blocked;
  /* The program's asynchronous signals are for its own threads.  */
  sigfillset (&blocked);
  for (size_t i = 0; i < GUARDED_SIGNALS; i++)
    sigdelset (&blocked, guarded_signals[i]);
  pthread_sigmask (SIG_BLOCK, &blocked, NULL);
  in_runtime = 1;
  stack_t signal_stack = { .ss_sp = runtime_map (SIGNAL_STACK_SIZE),
                           .ss_size = SIGNAL_STACK_SIZE };
  if (signal_stack.ss_sp != NULL)
    sigaltstack (&signal_stack, NULL);
}

/* Worker W's loop: its queue's buffers until the queue stops.  */
static void
drain_queue (unsigned w)
{
  struct worker *worker = &workers[w];
  for (;;)
    {
      struct event_buffer *buffer;
      pthread_mutex_lock (&queue_lock);
      while (worker->full_head == NULL && !stopping)
        pthread_cond_wait (&queue_has_full, &queue_lock);
      buffer = worker->full_head;
      if (buffer == NULL)
        {
          pthread_mutex_unlock (&queue_lock);
          break;
        }
      worker->full_head = buffer->next[w];
      if (worker->full_head == NULL)
        worker->full_tail = NULL;
      pthread_mutex_unlock (&queue_lock);

      if (atomic_load (&module_alive) && buffer->count > 0)
        {
          call_module (worker_mode ? CALL_WORKER_HANDLE : CALL_HANDLE, w,
                       buffer, NULL);
          if (w == 0)
            events_delivered += buffer->count;
        }

      pthread_mutex_lock (&queue_lock);
      if (--buffer->pending == 0)
        {
          buffer->next[0] = free_list;
          free_list = buffer;
          pthread_cond_signal (&queue_has_free);
        }
      pthread_mutex_unlock (&queue_lock);
    }
}

/* Workers 1 .. N-1.  */
static void *
worker_main (void *argument)
{
  unsigned w = (unsigned) (uintptr_t) argument;
  backend_thread_setup ();
  if (atomic_load (&module_alive))
    call_module (CALL_WORKER_START, w, NULL, NULL);
  drain_queue (w);
  return NULL;
}

/* Worker 0: init, the other workers, its queue, merge and finish.  */
static void *
backend_main (void *unused)
{
  int result = 0;
  bool alive;
  unsigned started = 1;

  (void) unused;
  backend_thread_setup ();
  alive = call_module (CALL_INIT, 0, NULL, &result);
  if (alive && result != 0)
    log_printf ("module %s refused to start (its init returned %d); the "
                "program goes on without it",
                module->name ? module->name : "?", result);
  alive = alive && result == 0;
  if (alive && worker_mode)
    alive = call_module (CALL_WORKER_START, 0, NULL, NULL);
  for (; alive && started < worker_count; started++)
    if (pthread_create (&workers[started].thread, NULL, worker_main,
                        (void *) (uintptr_t) started)
        != 0)
      {
        log_printf ("module %s: cannot start worker %u; the program goes "
                    "on without the module",
                    module->name ? module->name : "?", started);
        alive = false;
        switch_module_off ();
      }
  if (!alive)
    {
      /* The workers started stop at once; the buffers are theirs to
         release until the queue stops.  */
      announce_start (-1);
      drain_queue (0);
      for (unsigned w = 1; w < started; w++)
        pthread_join (workers[w].thread, NULL);
      return NULL;
    }
  announce_start (1);
  drain_queue (0);
  for (unsigned w = 1; w < started; w++)
    pthread_join (workers[w].thread, NULL);
  if (atomic_load (&module_alive) && worker_mode)
    call_module (CALL_MERGE, 0, NULL, NULL);
  if (atomic_load (&module_alive))
    call_module (CALL_FINISH, 0, NULL, NULL);
  return NULL;
}

/* ---- Loading ---- */

static void
child_after_fork (void)
{
  /* No backend thread in the child: it records no events.  */
  switch_module_off ();
  current_buffer = NULL;
  backend_running = false;
}

static const struct memprof_module *
load_module (const char *path)
{
  void *handle = dlopen (path, RTLD_NOW | RTLD_LOCAL);
  const struct memprof_module *found;

  if (handle == NULL)
    {
      log_printf ("module=%s: cannot load it: %s; the program goes on "
                  "without it",
                  path, dlerror ());
      return NULL;
    }
  found = (const struct memprof_module *) dlsym (handle, "memprof_module");
  if (found == NULL)
    {
      log_printf ("module=%s: no symbol memprof_module (a struct "
                  "memprof_module, include/memprof/module.h); the program "
                  "goes on without it",
                  path);
      return NULL;
    }
  if (found->abi_version != MEMPROF_MODULE_ABI_VERSION
      && found->abi_version != 1)
    {
      log_printf ("module=%s: built for module ABI version %u, this runtime "
                  "implements versions 1 and %u; rebuild it against this "
                  "<memprof/module.h>",
                  path, found->abi_version, MEMPROF_MODULE_ABI_VERSION);
      return NULL;
    }
  if (found->abi_version == 1)
    {
      /* The fields of version 1 only: one backend thread.  */
      static struct memprof_module version_1;
      memcpy (&version_1, found,
              offsetof (struct memprof_module, finish) + sizeof found->finish);
      found = &version_1;
    }
  if (found->handle == NULL && found->worker_handle == NULL)
    {
      log_printf ("module=%s: memprof_module.handle and worker_handle are "
                  "null; the program goes on without it",
                  path);
      return NULL;
    }
  return found;
}

/* The worker count and the partition; false when there is no memory for
   the workers.  */
static bool
choose_workers (void)
{
  unsigned wanted = runtime_options.module_workers
                        ? (unsigned) runtime_options.module_workers
                        : module->workers;
  if (wanted > WORKERS_MAX)
    wanted = WORKERS_MAX;
  if (wanted > 1 && module->worker_handle == NULL)
    {
      log_printf ("module %s: %u workers asked, but it has no "
                  "worker_handle (module ABI version 2); one backend thread",
                  module->name ? module->name : "?", wanted);
      wanted = 1;
    }
  worker_count = wanted ? wanted : 1;
  /* A module with worker_handle only runs as worker 0 of 1.  */
  worker_mode = worker_count > 1 || module->handle == NULL;
  if (module->partition_shift > 0 && module->partition_shift < 64)
    partition_shift = module->partition_shift;
  if (worker_mode)
    for (unsigned w = 0; w < worker_count; w++)
      {
        workers[w].events
            = runtime_map (EVENTS_PER_BUFFER * sizeof (struct memprof_event));
        if (workers[w].events == NULL)
          {
            log_printf ("module=%s: no memory for its workers",
                        runtime_options.module);
            return false;
          }
      }
  return true;
}

static void
events_start (void)
{
  in_runtime++;
  module = load_module (runtime_options.module);
  if (module == NULL)
    goto out;
  buffers = runtime_map (EVENT_BUFFERS * sizeof *buffers);
  if (buffers == NULL || pthread_key_create (&thread_exit_key, thread_exits))
    {
      log_printf ("module=%s: no memory for the event queue",
                  runtime_options.module);
      goto out;
    }
  for (size_t i = 0; i < EVENT_BUFFERS; i++)
    {
      buffers[i].next[0] = free_list;
      free_list = &buffers[i];
    }
  if (!choose_workers ())
    goto out;
  install_fault_handlers ();
  pthread_atfork (NULL, NULL, child_after_fork);
  if (pthread_create (&backend, NULL, backend_main, NULL) != 0)
    {
      log_printf ("module=%s: cannot start its thread", runtime_options.module);
      goto out;
    }
  backend_running = true;
  pthread_mutex_lock (&queue_lock);
  while (start_result == 0)
    pthread_cond_wait (&module_started, &queue_lock);
  pthread_mutex_unlock (&queue_lock);
  if (start_result > 0)
    {
      uint32_t wanted = module->events & ((1u << MEMPROF_EVENT_KINDS) - 1);
      atomic_store (&events_wanted, wanted);
      atomic_store (&events_want_allocations,
                    (wanted & MEMPROF_EVENTS_ALLOCATION) != 0);
      allocator_observers_changed ();
      if (runtime_options.verbosity >= 1)
        log_printf ("module %s loaded from %s (events 0x%x, %u workers)",
                    module->name ? module->name : "?", runtime_options.module,
                    wanted, worker_count);
    }
out:
  in_runtime--;
}

/* After the runtime's constructor (101): the log and the options are
   there.  */
__attribute__ ((constructor (102))) static void
events_constructor (void)
{
  runtime_ensure_initialized ();
  if (runtime_state == RUNTIME_RUNNING && runtime_options.module[0] != '\0')
    events_start ();
}

__attribute__ ((destructor (101))) static void
events_destructor (void)
{
  if (!backend_running)
    return;
  in_runtime++;
  stop_events ();
  pthread_mutex_lock (&queue_lock);
  stopping = true;
  for (size_t i = 0; i < EVENT_BUFFERS; i++)
    if (buffers[i].filling)
      push_full (&buffers[i]);
  pthread_cond_broadcast (&queue_has_free);
  pthread_cond_broadcast (&queue_has_full);
  pthread_mutex_unlock (&queue_lock);
  current_buffer = NULL;
  pthread_join (backend, NULL);
  backend_running = false;
  if (runtime_options.verbosity >= 1)
    log_printf ("module %s: %llu events delivered",
                module->name ? module->name : "?",
                (unsigned long long) events_delivered);
  in_runtime--;
}

/* ---- The events ---- */

#define WANTS(kind)                                                            \
  UNLIKELY (atomic_load_explicit (&events_wanted, memory_order_relaxed)        \
            & MEMPROF_EVENT_BIT (kind))

void
events_record_allocation (uint64_t pointer, uint64_t size, uint64_t context,
                          uint64_t call_site)
{
  if (WANTS (MEMPROF_EVENT_ALLOC))
    append (MEMPROF_EVENT_ALLOC, pointer, size, context, call_site);
}

void
events_record_free (uint64_t pointer)
{
  if (WANTS (MEMPROF_EVENT_FREE))
    append (MEMPROF_EVENT_FREE, pointer, 0, 0, 0);
}

#define MEMORY_EVENT(name, kind)                                               \
  MEMPROF_EXPORT void name (uint64_t address, uint64_t size, uint64_t site)    \
  {                                                                            \
    if (WANTS (kind))                                                          \
      append (kind, address, size, site, 0);                                   \
  }                                                                            \
  MEMPROF_EXPORT void name##_value (uint64_t address, uint64_t size,           \
                                    uint64_t site, uint64_t value)             \
  {                                                                            \
    if (WANTS (kind))                                                          \
      append (kind, address, size, site, value);                               \
  }

MEMORY_EVENT (__memprof_event_load, MEMPROF_EVENT_LOAD)
MEMORY_EVENT (__memprof_event_store, MEMPROF_EVENT_STORE)

#define CONTEXT_EVENT(name, kind)                                              \
  MEMPROF_EXPORT void name (uint64_t site)                                     \
  {                                                                            \
    if (WANTS (kind))                                                          \
      append (kind, 0, 0, site, 0);                                            \
  }

CONTEXT_EVENT (__memprof_event_function_entry, MEMPROF_EVENT_FUNCTION_ENTRY)
CONTEXT_EVENT (__memprof_event_function_exit, MEMPROF_EVENT_FUNCTION_EXIT)
CONTEXT_EVENT (__memprof_event_loop_entry, MEMPROF_EVENT_LOOP_ENTRY)
CONTEXT_EVENT (__memprof_event_loop_iteration, MEMPROF_EVENT_LOOP_ITERATION)
CONTEXT_EVENT (__memprof_event_loop_exit, MEMPROF_EVENT_LOOP_EXIT)
