/* Profiles on abort and fatal signals (handle_abort,
   handle_fatal_signals): the profile a normal exit would write, written
   from the signal handler, after which the signal is raised again with
   its default action, so that the program ends as it would have without
   the runtime (same signal, same exit status, same core dump).

   What the handler may do: it runs on the thread that aborted or
   faulted, at any point of that thread's work, so it allocates nothing
   (the snapshot's memory comes from mmap) and uses no stdio; the files
   are written with open, write, rename and close.  Locks: a dump being
   written by another thread is waited for a while (profile.c); a spin
   lock of the runtime still busy after a bounded number of tries is
   taken to be held by the interrupted thread, and the handler gives up
   with one line on the log rather than deadlock or read half-changed
   lists.  What it cannot promise: a stack overflow leaves no stack for
   the handler (nothing is written unless the program gave the thread an
   alternate signal stack); the list of loaded objects is read with
   dl_iterate_phdr, which takes the dynamic loader's lock (a thread
   killed inside dlopen may block it); the messages use vsnprintf and
   strerror, which glibc implements without allocating for the runtime's
   formats (in practice, not by POSIX's letter); no print_text summary
   and no stats are printed, and a malloc API trace (trace=1) is not
   completed.

   A handler the program installed before the runtime started is left in
   place (the runtime installs none for that signal); one the program
   installs later replaces the runtime's, as the program asked.  */

#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const int abort_signals[] = { SIGABRT };
static const int fatal_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL };

/* The first thread to take a fatal signal writes the profile; any other
   waits for the end it brings.  */
static _Atomic bool crash_dump_started;
/* Set on the thread writing it (a fault while it writes ends at once). */
static __thread bool dumping_here __attribute__ ((tls_model ("initial-exec")));

static void
on_fatal_signal (int signal_number, siginfo_t *info, void *context)
{
  struct sigaction default_action;
  int saved_errno = errno;
  (void) info;
  (void) context;

  if (!atomic_exchange (&crash_dump_started, true))
    {
      dumping_here = true;
      if (runtime_options.verbosity >= 1)
        log_printf ("signal %d: writing the profile", signal_number);
      if (runtime_options.write_profile && runtime_options.profile)
        profile_dump_in_signal ();
    }
  else if (!dumping_here)
    {
      /* Another thread is writing it and will end the process.  */
      const struct timespec pause = { 10, 0 };
      nanosleep (&pause, NULL);
    }
  memset (&default_action, 0, sizeof default_action);
  default_action.sa_handler = SIG_DFL;
  sigemptyset (&default_action.sa_mask);
  sigaction (signal_number, &default_action, NULL);
  /* Blocked until this handler returns; then the default action ends the
     process with this signal.  A fault that is not raised again (a bad
     memory access) would simply happen again on return.  */
  raise (signal_number);
  errno = saved_errno;
}

static void
install (const int *signals, size_t count)
{
  for (size_t i = 0; i < count; i++)
    {
      struct sigaction current, action;
      if (sigaction (signals[i], NULL, &current) != 0)
        continue;
      if ((current.sa_flags & SA_SIGINFO) || current.sa_handler != SIG_DFL)
        {
          if (runtime_options.verbosity >= 1)
            log_printf ("signal %d has a handler of the program's; no "
                        "profile will be written on it",
                        signals[i]);
          continue;
        }
      memset (&action, 0, sizeof action);
      action.sa_sigaction = on_fatal_signal;
      /* SA_ONSTACK: on the thread's alternate stack, when the program
         gave it one (a stack overflow needs it).  */
      action.sa_flags = SA_SIGINFO | SA_ONSTACK;
      sigemptyset (&action.sa_mask);
      sigaction (signals[i], &action, NULL);
    }
}

void
signals_start (void)
{
  if (runtime_options.handle_abort)
    install (abort_signals, sizeof abort_signals / sizeof abort_signals[0]);
  if (runtime_options.handle_fatal_signals)
    install (fatal_signals, sizeof fatal_signals / sizeof fatal_signals[0]);
}
