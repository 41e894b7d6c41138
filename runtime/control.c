/* Dumps for programs that never exit, and fork.

   dump_signal: the handler only sets a flag and wakes the runtime's own
   thread (write to an eventfd is async-signal-safe); that thread writes
   the profile, outside the signal context.  dump_interval_s: the same
   thread writes one every N seconds.

   fork: the prepare handler takes every lock of the runtime, so that no
   list is half-changed when the address space is copied; the child then
   releases them (and every context's lock, which another thread of the
   parent may have held), forgets the parent's records and starts its own
   dump thread.  Its profile is named with its own pid.  */

#define _GNU_SOURCE
#include "internal.h"
#include "trace.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

static int wake_fd = -1;
static volatile sig_atomic_t dump_requested;
static bool thread_running;

struct signal_name
{
  const char *name;
  int number;
};

static const struct signal_name signal_names[] = { { "SIGUSR1", SIGUSR1 },
                                                   { "SIGUSR2", SIGUSR2 },
                                                   { "SIGHUP", SIGHUP },
                                                   { "SIGPROF", SIGPROF },
                                                   { "SIGWINCH", SIGWINCH } };

static int
dump_signal_number (void)
{
  for (size_t i = 0; i < sizeof signal_names / sizeof signal_names[0]; i++)
    if (strcmp (runtime_options.dump_signal, signal_names[i].name) == 0)
      return signal_names[i].number;
  return 0;
}

static void
request_dump (int signal_number)
{
  uint64_t one = 1;
  int saved_errno = errno;
  (void) signal_number;
  dump_requested = 1;
  if (wake_fd >= 0 && write (wake_fd, &one, sizeof one) < 0)
    {
      /* The thread polls again within a second anyway.  */
    }
  errno = saved_errno;
}

static void *
dump_thread (void *unused)
{
  long interval_ms = runtime_options.dump_interval_s * 1000L;
  uint32_t next_due = runtime_now_ms () + (uint32_t) interval_ms;
  (void) unused;

  /* This thread's own work is the runtime's.  */
  in_runtime++;
  for (;;)
    {
      struct pollfd wait = { .fd = wake_fd, .events = POLLIN };
      int timeout = 1000;
      if (interval_ms > 0)
        {
          int32_t left = (int32_t) (next_due - runtime_now_ms ());
          timeout = left < 0 ? 0 : left < 1000 ? left : 1000;
        }
      if (poll (&wait, 1, timeout) > 0)
        {
          uint64_t count;
          if (read (wake_fd, &count, sizeof count) < 0)
            continue;
        }
      if (runtime_state != RUNTIME_RUNNING)
        break;
      if (dump_requested)
        {
          dump_requested = 0;
          in_runtime--;
          trace_sync_for_dump ();
          profile_dump (MEMPROF_EXTRA_ON_SIGNAL);
          in_runtime++;
        }
      if (interval_ms > 0 && (int32_t) (next_due - runtime_now_ms ()) <= 0)
        {
          in_runtime--;
          trace_sync_for_dump ();
          profile_dump (MEMPROF_EXTRA_ON_INTERVAL);
          in_runtime++;
          next_due = runtime_now_ms () + (uint32_t) interval_ms;
        }
    }
  return NULL;
}

static void
start_dump_thread (void)
{
  pthread_attr_t attributes;
  pthread_t thread;

  thread_running = false;
  if (dump_signal_number () == 0 && runtime_options.dump_interval_s == 0)
    return;
  if (wake_fd < 0)
    wake_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  in_runtime++;
  pthread_attr_init (&attributes);
  pthread_attr_setdetachstate (&attributes, PTHREAD_CREATE_DETACHED);
  /* Keep the profiled program's signals to its own threads.  */
  sigset_t all, old;
  sigfillset (&all);
  pthread_sigmask (SIG_SETMASK, &all, &old);
  if (pthread_create (&thread, &attributes, dump_thread, NULL) == 0)
    thread_running = true;
  else
    log_printf ("cannot start the dump thread: dump_signal and "
                "dump_interval_s will do nothing");
  pthread_sigmask (SIG_SETMASK, &old, NULL);
  pthread_attr_destroy (&attributes);
  in_runtime--;
}

/* From the prepare handler to the release in parent and child, the
   thread holds every lock of the runtime's: a section (internal.h).  */
static void
fork_prepare (void)
{
  runtime_entered = true;
  atomic_signal_fence (memory_order_seq_cst);
  if (interceptors_fork_prepare)
    interceptors_fork_prepare ();
  modules_fork_prepare ();
  profile_fork_prepare ();
  trace_fork_prepare ();
  peak_fork_prepare ();
  allocator_fork_prepare ();
}

static void
fork_parent (void)
{
  allocator_fork_release ();
  peak_fork_release ();
  trace_fork_parent ();
  profile_fork_parent ();
  modules_fork_release ();
  if (interceptors_fork_release)
    interceptors_fork_release ();
  entry_end ();
}

bool runtime_loader_lost;

static void
fork_child (void)
{
  /* Decided first: the handlers below must not walk the loaded objects
     when the loader's lock is lost (internal.h).  */
  if (loader_walk_in_progress && loader_walk_in_progress ())
    {
      runtime_loader_lost = true;
      /* libunwind looks its tables up with dl_iterate_phdr: frame
         pointers only, no function starts for folding, no check.  */
      strcpy (runtime_options.unwinder, "fp");
      runtime_options.fold_recursion = false;
      runtime_options.verify_contexts = false;
    }
  allocator_fork_release ();
  peak_fork_release ();
  trace_fork_child ();
  profile_fork_child ();
  depot_fork_child ();
  clock_ticker_fork_child ();
  modules_fork_release ();
  if (interceptors_fork_release)
    interceptors_fork_release ();
  /* The child's profile holds what the child does.  */
  depot_reset_records ();
  globals_fork_child ();
  if (wake_fd >= 0)
    {
      close (wake_fd);
      wake_fd = -1;
    }
  start_dump_thread ();
  entry_end ();
}

void
control_start (void)
{
  int signal_number = dump_signal_number ();

  in_runtime++;
  globals_start ();
  pthread_atfork (fork_prepare, fork_parent, fork_child);
  in_runtime--;
  if (signal_number != 0)
    {
      struct sigaction action;
      memset (&action, 0, sizeof action);
      action.sa_handler = request_dump;
      action.sa_flags = SA_RESTART;
      sigemptyset (&action.sa_mask);
      sigaction (signal_number, &action, NULL);
    }
  start_dump_thread ();
}
