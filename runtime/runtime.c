/* Start-up, exit and the public API.

   Start-up happens at the first of: the first allocation (which may come
   from the C library before any constructor), the library's constructor,
   or an instrumented module's call to __memprof_init, but never before
   the thread's thread-local storage is set up (an IFUNC resolver's
   allocation while the program is relocated is left unrecorded).  It reads
   MEMPROF_OPTIONS, reserves the shadow (unless an IFUNC did earlier:
   shadow.c) and publishes its base, all without allocating.  The exit profile is
   written by a destructor that runs after the program's own destructors
   and atexit handlers.  */

#define _GNU_SOURCE
#include "internal.h"
#include "trace.h"
#include "memprof/interface.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/auxv.h>
#include <sys/rseq.h>
#include <time.h>
#include <unistd.h>

_Atomic int runtime_state = RUNTIME_UNINITIALIZED;
struct memprof_options runtime_options;
bool runtime_histogram;
__thread int in_runtime __attribute__ ((tls_model ("initial-exec")));

/* true in the thread-local storage image, so false while this thread's
   block still holds zeros: glibc copies the images into the main
   thread's block only once every module loaded with the program is
   relocated (rtld.c: "thread-local variables must only be accessed after
   completing the next step").  IFUNC resolvers run before that, and an
   allocation made there cannot start the runtime or be recorded: the C
   library's thread-local variables are zeros too (pthread_getattr_np,
   which the stack capture asks for the stack's bounds, parses
   /proc/self/maps with sscanf, which follows the locale pointer: NULL),
   whatever the runtime writes to its own is cleared by the copy, and
   environ is not set yet.  Volatile: never written, it would otherwise be
   folded to its initial value.  */
static __thread volatile bool thread_storage_ready
    __attribute__ ((tls_model ("initial-exec")))
    = true;

/* Allocations made before thread_storage_ready (unrecorded).  */
_Atomic uint64_t runtime_allocations_too_early;

static time_t start_second;

/* Problems found while parsing options are kept until the log is set up. */
static char option_problems[2048];
static size_t option_problems_used;

static void
keep_option_problem (void *cookie, const char *line)
{
  size_t length = strlen (line);
  (void) cookie;
  if (option_problems_used + length + 1 < sizeof option_problems)
    {
      memcpy (option_problems + option_problems_used, line, length);
      option_problems_used += length;
      option_problems[option_problems_used++] = '\n';
    }
}

static void
log_option_problem (void *cookie, const char *line)
{
  (void) cookie;
  log_printf ("%s", line);
}

static void
print_options_help (void)
{
  log_printf ("options (MEMPROF_OPTIONS=key=value:key=value...):");
  for (size_t i = 0; i < memprof_option_count; i++)
    {
      const struct memprof_option_desc *desc = &memprof_option_table[i];
      char value[MEMPROF_OPTION_STRING_MAX];
      options_format_value (&runtime_options, desc, value, sizeof value);
      log_printf ("  %s (default %s, now %s): %s", desc->name,
                  desc->default_text, value, desc->help);
    }
}

/* The C library sets environ in its initialiser, which in a dynamically
   linked program runs after the program's .preinit_array functions and
   IFUNC resolvers: a start-up from one of them (their first allocation)
   finds environ null, and getenv nothing.  The environment is then still
   where the kernel put it, on the initial stack: __libc_stack_end (set
   by the dynamic linker before it relocates anything, and kept right
   when it is run as a command and moves the tables down) points at
   argc, followed by argv's pointers, a null, the environment's pointers,
   a null and the auxiliary vector.  The kernel puts AT_RANDOM's 16 bytes
   above these tables, in the same stack, so every read of them stays
   between the two addresses, and a layout that is not this one (another
   loader, a program that changed its argv) is refused, never followed
   out of the stack: the auxiliary vector found must end within them and
   hold the AT_RANDOM and AT_EXECFN that getauxval gives.  Only then are
   the environment's strings read.  Sets *READABLE to whether the layout
   was found; returns MEMPROF_OPTIONS's value, or NULL.  */
extern void *__libc_stack_end;

static const char *
options_from_initial_stack (bool *readable)
{
  static const char name[] = "MEMPROF_OPTIONS=";
  const size_t name_length = sizeof name - 1;
  const uintptr_t *words = __libc_stack_end;
  const uintptr_t tables_end = getauxval (AT_RANDOM);
  const uintptr_t execfn = getauxval (AT_EXECFN);
  bool random_seen = false, execfn_seen = false;
  size_t count, argc, environment, i;

  *readable = false;
  if (words == NULL || tables_end <= (uintptr_t) words)
    return NULL;
  count = (tables_end - (uintptr_t) words) / sizeof *words;
  /* argc, argv's null, the environment's null at least.  */
  if (count < 3 || words[0] > count - 3)
    return NULL;
  argc = words[0];
  if (words[1 + argc] != 0)
    return NULL;
  environment = 2 + argc;
  for (i = environment; i < count && words[i] != 0; i++)
    ;
  for (i++; i + 1 < count && words[i] != AT_NULL; i += 2)
    {
      random_seen |= words[i] == AT_RANDOM && words[i + 1] == tables_end;
      execfn_seen |= words[i] == AT_EXECFN && words[i + 1] == execfn;
    }
  if (i + 1 >= count || !random_seen || !execfn_seen)
    return NULL;
  *readable = true;
  /* The first one, as getenv.  */
  for (i = environment; words[i] != 0; i++)
    if (strncmp ((const char *) words[i], name, name_length) == 0)
      return (const char *) words[i] + name_length;
  return NULL;
}

/* Whether MEMPROF_OPTIONS was read from the initial stack, for the
   log once it is open.  */
static bool options_read_before_environ;

/* MEMPROF_OPTIONS's value, or NULL when it is not set, cannot be read,
   or the program is set-user-id (which ignores it, as secure_getenv
   would).  */
static const char *
options_from_environment (void)
{
  bool readable;
  const char *text;

  /* environ is also null once the program has emptied its environment
     (clearenv, environ = NULL): then MEMPROF_OPTIONS is unset, and the
     kernel's copy on the initial stack must not bring it back.  The C
     library's initialiser sets program_invocation_name to argv[0] just
     after environ; before it, the name is "" (so a program run with an
     empty argv[0] that clears its environment is taken as not yet
     started).  */
  if (environ != NULL || program_invocation_name == NULL
      || program_invocation_name[0] != '\0')
    return secure_getenv ("MEMPROF_OPTIONS");
  if (getauxval (AT_SECURE) != 0)
    return NULL;
  text = options_from_initial_stack (&readable);
  if (!readable)
    keep_option_problem (
        NULL, "MEMPROF_OPTIONS: the runtime started before the C library "
              "set environ (an allocation in .preinit_array or an IFUNC "
              "resolver), and the initial stack does not hold the "
              "environment where the kernel puts it; MEMPROF_OPTIONS is "
              "not read, the defaults and compiled-in options apply");
  options_read_before_environ = readable;
  return text;
}

static void
initialize (void)
{
  struct timespec now;
  const char *text;

  in_runtime++;
  options_set_defaults (&runtime_options);
  options_apply_compiled (&runtime_options, keep_option_problem, NULL);
  text = options_from_environment ();
  options_parse (&runtime_options, text, "MEMPROF_OPTIONS", keep_option_problem,
                 NULL);
  log_configure (runtime_options.log_path);
  if (option_problems_used > 0)
    {
      /* Each problem line gets the log's prefix.  */
      char *line = option_problems;
      option_problems[option_problems_used - 1] = '\0';
      for (char *next; line != NULL; line = next)
        {
          next = strchr (line, '\n');
          if (next != NULL)
            *next++ = '\0';
          log_printf ("%s", line);
        }
    }
  if (runtime_options.help)
    print_options_help ();
  runtime_histogram = runtime_options.histogram;
  modes_start (text);

  clock_gettime (CLOCK_MONOTONIC, &now);
  start_second = now.tv_sec;
  clock_start_ms = (int64_t) now.tv_sec * 1000;
  shadow_reserve ();
  stats_start ();
  hooks_start ();
  peak_start ();
  trace_initialize ();
  if (runtime_options.verbosity >= 2 && options_read_before_environ)
    log_printf ("started before the C library set environ: "
                "MEMPROF_OPTIONS read from the initial stack");
  if (runtime_options.verbosity >= 2)
    log_printf ("started: shadow at 0x%lx, %s mode, profile '%s'",
                (unsigned long) __memprof_shadow_base,
                runtime_histogram ? "histogram" : "counter",
                runtime_options.profile_file);
  atomic_store (&runtime_state, RUNTIME_RUNNING);
  allocator_observers_changed ();
  in_runtime--;
}

bool
runtime_too_early (void)
{
  return !thread_storage_ready;
}

void
runtime_ensure_initialized (void)
{
  int expected = RUNTIME_UNINITIALIZED;
  if (atomic_load (&runtime_state) >= RUNTIME_RUNNING)
    return;
  /* Too early: the next call after relocation starts the runtime.  */
  if (UNLIKELY (!thread_storage_ready))
    return;
  if (atomic_compare_exchange_strong (&runtime_state, &expected,
                                      RUNTIME_INITIALIZING))
    {
      initialize ();
      return;
    }
  /* Another thread is starting the runtime, or this one is (an allocation
     made during start-up): the latter must not wait for itself.  */
  if (in_runtime)
    return;
  while (atomic_load (&runtime_state) == RUNTIME_INITIALIZING)
    sched_yield ();
}

uint32_t
runtime_now_ms (void)
{
  return (uint32_t) (clock_now_ns () / 1000000 - (int64_t) start_second * 1000);
}

uint32_t
runtime_current_cpu_slow (void)
{
  return (uint32_t) sched_getcpu ();
}

void *
runtime_map (size_t size)
{
  void *memory = mmap (NULL, size, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return memory == MAP_FAILED ? NULL : memory;
}

void
runtime_unmap (void *address, size_t size)
{
  munmap (address, size);
}

/* A sampled run (the always-on mode) records a few thousand contexts,
   and each new one touches its hash tables' entries at random: in the
   full-size tables (megabytes: the depot's, the fold memo's, the frame
   facts') nearly every one cost a page of its own, faulted twice, read
   (the kernel's zero page) then written (docs/benchmarks.md, "Eighth
   pass, always-on").  A table made smaller than a run needs is only
   slower (longer chains, a memo that fills), never wrong, so a table
   made while sampling and used after sample_interval changes stays
   right.  */
size_t
runtime_table_entries (size_t full, size_t sampled)
{
  return runtime_options.sample_interval > 1 && sampled < full ? sampled : full;
}

__attribute__ ((constructor (101))) static void
runtime_constructor (void)
{
  runtime_ensure_initialized ();
  if (runtime_state == RUNTIME_RUNNING)
    {
      control_start ();
      signals_start ();
      trace_start_writer ();
    }
}

__attribute__ ((destructor (101))) static void
runtime_destructor (void)
{
  if (runtime_state != RUNTIME_RUNNING)
    return;
  trace_finish ();
  /* dump_at_exit=0: neither the profile nor its text at exit (stats=1
     still takes one, to count).  */
  if ((runtime_options.dump_at_exit
       && ((runtime_options.write_profile && runtime_options.profile)
           || runtime_options.print_text))
      || runtime_options.stats)
    profile_dump (MEMPROF_EXTRA_AT_EXIT);
  stats_report (profile_heap_accesses, profile_live_heap_counters);
  if (runtime_options.verbosity >= 2)
    clock_ticker_report ();
  if (runtime_options.verbosity >= 2)
    clock_report ();
  modes_check_at_exit ();
  atomic_store (&runtime_state, RUNTIME_FINISHED);
  allocator_observers_changed ();
}

/* ---- For instrumented code ---- */

MEMPROF_EXPORT void
__memprof_init (unsigned abi_version, unsigned mode)
{
  static _Atomic bool mismatch_reported;
  runtime_ensure_initialized ();
  if (interceptors_note_modules != NULL)
    interceptors_note_modules ();
  if (abi_version != MEMPROF_ABI_VERSION)
    {
      if (!atomic_exchange (&mismatch_reported, true))
        log_printf (
            "a module was instrumented for ABI version %u but this runtime "
            "implements version %u; rebuild it with the matching plugin",
            abi_version, MEMPROF_ABI_VERSION);
      return;
    }
  modes_register (mode, __builtin_return_address (0));
}

/* ---- The public API (memprof/interface.h) ---- */

MEMPROF_EXPORT int
memprof_dump (void)
{
  runtime_ensure_initialized ();
  trace_sync_for_dump ();
  return profile_dump (MEMPROF_EXTRA_BY_API);
}

MEMPROF_EXPORT void
memprof_reset (void)
{
  runtime_ensure_initialized ();
  in_runtime++;
  depot_reset_records ();
  globals_reset ();
  /* The log is opened again at its next line, from log_path as it is
     then (a file renamed meanwhile is left alone).  */
  log_reopen ();
  in_runtime--;
}

MEMPROF_EXPORT int
memprof_set_option (const char *key_equals_value)
{
  struct memprof_options updated;
  int problems;

  runtime_ensure_initialized ();
  if (key_equals_value == NULL)
    return -1;
  in_runtime++;
  updated = runtime_options;
  problems = options_parse (&updated, key_equals_value, "memprof_set_option",
                            log_option_problem, NULL);
  if (problems == 0)
    {
      bool log_changed
          = strcmp (updated.log_path, runtime_options.log_path) != 0;
      /* Fixed at start-up.  */
      updated.histogram = runtime_options.histogram;
      updated.handle_abort = runtime_options.handle_abort;
      updated.handle_fatal_signals = runtime_options.handle_fatal_signals;
      runtime_options = updated;
      if (log_changed)
        log_configure (runtime_options.log_path);
    }
  if (problems == 0 && interceptors_recheck != NULL)
    interceptors_recheck ();
  in_runtime--;
  return problems == 0 ? 0 : -1;
}

MEMPROF_EXPORT int
memprof_get_option (const char *name, char *buf, size_t size)
{
  const struct memprof_option_desc *desc;
  char scratch[1];

  runtime_ensure_initialized ();
  if (name == NULL || (desc = options_find (name, strlen (name))) == NULL)
    return -1;
  if (buf == NULL || size == 0)
    return options_format_value (&runtime_options, desc, scratch,
                                 sizeof scratch);
  return options_format_value (&runtime_options, desc, buf, size);
}
