/* Profiling modules: the event specification and the module ABI.

   A module is a shared object that writes its own profiler on the events
   GCC MemProf delivers (docs/modules.md):

     - memory events, from code built with
       -fplugin-arg-memprof-events=load,store: the address and size of a
       load or a store of the heap or a global, and its instruction id;
     - allocation events, from the runtime's malloc family, new and
       delete (no instrumentation needed): the block, its requested size,
       its allocation context;
     - context events, from code built with
       -fplugin-arg-memprof-events=function,loop: function entry and exit,
       loop entry, each iteration of a loop, loop exit, with the id of the
       function or loop.

   The program runs with MEMPROF_OPTIONS=module=/path/to/module.so (and
   module_args=...).  The runtime dlopens the module, finds the symbol
   `memprof_module` (a struct memprof_module), and starts one backend
   thread (or N address-partitioned workers: `workers' below).  Each thread of the program appends its events to a buffer of
   its own; full buffers go to the backend thread, which calls the
   module's `handle` with them, in each thread's order.  The module's
   code (init, handle, finish) runs only on that backend thread: a module
   needs no lock, and an allocation it makes is neither profiled nor
   shown to it.  The heap profile is written as without a module, with
   the same counts.

   A module that refuses (init returns nonzero, a wrong ABI version) or
   faults (SIGSEGV, SIGBUS, SIGFPE, SIGILL in its code) is switched off
   with one line on the log; the program's output and exit status stay
   what they would be without it.

   Build a module with one command:
     gcc -shared -fPIC -O2 -I<prefix>/include -o my.so my.c  */

#ifndef MEMPROF_MODULE_H
#define MEMPROF_MODULE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this header's structures.  Version 2 appended the
   worker fields to struct memprof_module; a version 1 module still loads
   (one backend thread), any other version is refused with a message.  */
#define MEMPROF_MODULE_ABI_VERSION 2

/* ---- Events ---- */

enum memprof_event_kind
{
  MEMPROF_EVENT_LOAD,           /* address, size, site: the load */
  MEMPROF_EVENT_STORE,          /* address, size, site: the store */
  MEMPROF_EVENT_ALLOC,          /* address: the block, size: requested,
                                   site: its context id (0 if unknown) */
  MEMPROF_EVENT_FREE,           /* address: the block (never null) */
  MEMPROF_EVENT_FUNCTION_ENTRY, /* site: the function */
  MEMPROF_EVENT_FUNCTION_EXIT,  /* site: the function (a return) */
  MEMPROF_EVENT_LOOP_ENTRY,     /* site: the loop, before its first test */
  MEMPROF_EVENT_LOOP_ITERATION, /* site: the loop, each time its header
                                   runs (the first iteration included) */
  MEMPROF_EVENT_LOOP_EXIT,      /* site: the loop, on each exit edge */
  MEMPROF_EVENT_KINDS
};

/* The bit of event kind KIND in struct memprof_module's `events'.  */
#define MEMPROF_EVENT_BIT(kind) (1u << (kind))
#define MEMPROF_EVENTS_MEMORY                                                  \
  (MEMPROF_EVENT_BIT (MEMPROF_EVENT_LOAD)                                      \
   | MEMPROF_EVENT_BIT (MEMPROF_EVENT_STORE))
#define MEMPROF_EVENTS_ALLOCATION                                              \
  (MEMPROF_EVENT_BIT (MEMPROF_EVENT_ALLOC)                                     \
   | MEMPROF_EVENT_BIT (MEMPROF_EVENT_FREE))
#define MEMPROF_EVENTS_FUNCTION                                                \
  (MEMPROF_EVENT_BIT (MEMPROF_EVENT_FUNCTION_ENTRY)                            \
   | MEMPROF_EVENT_BIT (MEMPROF_EVENT_FUNCTION_EXIT))
#define MEMPROF_EVENTS_LOOP                                                    \
  (MEMPROF_EVENT_BIT (MEMPROF_EVENT_LOOP_ENTRY)                                \
   | MEMPROF_EVENT_BIT (MEMPROF_EVENT_LOOP_ITERATION)                          \
   | MEMPROF_EVENT_BIT (MEMPROF_EVENT_LOOP_EXIT))

/* One event, 40 bytes.  */
struct memprof_event
{
  uint32_t kind;    /* enum memprof_event_kind */
  uint32_t thread;  /* the program's thread: 1, 2, ... in order of its
                       first event */
  uint64_t address; /* memory and allocation events */
  uint64_t size;    /* memory and allocation events */
  uint64_t site;    /* an instruction id (memprof_site_of), or for an
                       allocation its context id */
  uint64_t value;   /* a load's or a store's value, zero-extended, when
                       the code was built with load-value / store-value
                       (0 otherwise); an allocation's call site (the
                       return address of the malloc call) */
};

/* ---- Instruction ids ---- */

enum memprof_site_kind
{
  MEMPROF_SITE_LOAD,
  MEMPROF_SITE_STORE,
  MEMPROF_SITE_FUNCTION,
  MEMPROF_SITE_LOOP
};

/* What an instruction id names.  The plugin writes one of these, read
   only, for each instrumented load, store, function and loop, into the
   section "memprof_sites" of the object; the id in an event is its
   address, so an id is unique in the process and names its source
   position without any lookup.  */
struct memprof_site
{
  const char *file;     /* as the compiler saw it; "" when unknown */
  const char *function; /* the function's assembler name */
  uint32_t line;        /* 0 when unknown */
  uint32_t column;      /* 0 when unknown */
  uint32_t kind;        /* enum memprof_site_kind */
  uint32_t number;      /* loops: the loop's number in its function */
};

/* The site an instruction id names (never null for an id of a load,
   store, function or loop event).  */
static inline const struct memprof_site *
memprof_site_of (uint64_t id)
{
  return (const struct memprof_site *) (uintptr_t) id;
}

/* ---- The module ---- */

/* A module defines one of these under the name `memprof_module':
     const struct memprof_module memprof_module = { ... };  */
struct memprof_module
{
  uint32_t abi_version; /* MEMPROF_MODULE_ABI_VERSION */
  uint32_t events;      /* MEMPROF_EVENT_BITs of the events it wants; the
                           others are not delivered */
  const char *name;     /* for the log */
  /* Called first, with the value of the module_args option ("" when
     unset).  Return 0 to run, nonzero to refuse (nothing else is
     called).  May be null.  */
  int (*init) (const char *arguments);
  /* A batch of COUNT events of one thread, in that thread's order.  */
  void (*handle) (const struct memprof_event *events, size_t count);
  /* At exit, after the last event: write the results.  May be null.  */
  void (*finish) (void);

  /* ---- Since ABI version 2: data-parallel workers ---- */

  /* The number of backend worker threads (the option module_workers
     overrides it); 0 or 1: one backend thread calling `handle' as in
     version 1.  With 2 or more, the runtime calls worker_start on each
     worker's thread, then worker_handle with that worker's events, and
     after the last event, on worker 0's thread once the others have
     stopped, merge with every worker's state, then finish.  init runs
     once, on worker 0, before the other workers start.  */
  uint32_t workers;
  /* Events are address-partitioned: a worker owns the granules of
     1 << partition_shift bytes (0: 12, 4 KiB) whose number modulo the
     worker count is its index; it gets the load and store events that
     touch one of its granules (an access across a granule boundary goes
     to each owner; a worker uses only the bytes it owns, see
     memprof_worker_owns), and every other event (allocation, function
     and loop events) in each thread's order.  */
  uint32_t partition_shift;
  /* Return the state of worker WORKER of WORKERS (null is a valid
     state).  May be null.  */
  void *(*worker_start) (unsigned worker, unsigned workers);
  /* A batch of COUNT events of one thread, for the worker of STATE.  */
  void (*worker_handle) (void *state, const struct memprof_event *events,
                         size_t count);
  /* After the last event: STATES[i] is worker i's state.  May be null.  */
  void (*merge) (void *const *states, unsigned workers);
};

/* Whether the byte at ADDRESS belongs to WORKER of WORKERS under a
   partition granule of 1 << SHIFT bytes (SHIFT as the runtime uses it:
   12 when the module said 0).  */
static inline int
memprof_worker_owns (uint64_t address, unsigned shift, unsigned worker,
                     unsigned workers)
{
  return workers <= 1 || (address >> shift) % workers == worker;
}

/* ---- The entry points of instrumented code (plugin <-> runtime) ----

   void NAME (uint64_t address, uint64_t size, uint64_t site) for loads
   and stores, the same with a fourth argument (uint64_t value) for the
   _value forms, void NAME (uint64_t site) for the context events.  */
#define MEMPROF_EVENT_LOAD_NAME "__memprof_event_load"
#define MEMPROF_EVENT_STORE_NAME "__memprof_event_store"
#define MEMPROF_EVENT_LOAD_VALUE_NAME "__memprof_event_load_value"
#define MEMPROF_EVENT_STORE_VALUE_NAME "__memprof_event_store_value"
#define MEMPROF_EVENT_FUNCTION_ENTRY_NAME "__memprof_event_function_entry"
#define MEMPROF_EVENT_FUNCTION_EXIT_NAME "__memprof_event_function_exit"
#define MEMPROF_EVENT_LOOP_ENTRY_NAME "__memprof_event_loop_entry"
#define MEMPROF_EVENT_LOOP_ITERATION_NAME "__memprof_event_loop_iteration"
#define MEMPROF_EVENT_LOOP_EXIT_NAME "__memprof_event_loop_exit"
/* The section of the struct memprof_site records.  */
#define MEMPROF_SITES_SECTION "memprof_sites"

/* ---- The module's events, read by the plugin (ABI version 2) ----

   A module states the plugin events it needs once, in its own source:
     MEMPROF_MODULE_EVENTS ("load store loop allocation");
   (the names of -fplugin-arg-memprof-events, docs/modules.md).  The text
   goes, NUL-terminated, into the section "memprof_events" of the module's
   shared object, and -fplugin-arg-memprof-events=@module.so reads it
   from there without loading the module.  */
#define MEMPROF_EVENTS_SECTION "memprof_events"
#define MEMPROF_MODULE_EVENTS(names)                                           \
  __attribute__ ((used, section (MEMPROF_EVENTS_SECTION))) static const char   \
      memprof_module_events[]                                                  \
      = names

#ifdef __cplusplus
}
#endif

#endif /* MEMPROF_MODULE_H */
