/* The ticker (clock_ticker=1; off by default): a time word that a helper
   keeps current, so that the allocator's two timestamps per block are
   two loads instead of two readings of the time stamp counter (an rdtsc
   costs 10-19 ns on the virtual machines measured, 40 % of a full
   profiling malloc+free pair's budget).

   The word holds CLOCK_MONOTONIC in nanoseconds (and the TSC beside it,
   for the peak's bookkeeping).  It only ever grows: the helper raises it
   to the time it reads once per TICKER_PERIOD_NS, and so does every
   reading that takes the exact clock (clock.c's).  A reading is the word
   when it is valid, the exact clock otherwise; so a reading is never
   ahead of CLOCK_MONOTONIC, never before a reading that happened before
   it (in any thread), and behind by at most the time since the last
   tick or exact reading.

   The bound.  A reading is exact when the thread has been off its CPU
   since its last exact reading (the kernel clears the thread's rseq_cs,
   clock.c), at every TICKER_CHECK_EVERY-th reading of a thread, and for
   TICKER_PUNCTUAL_NS after a tick of the helper came more than
   TICKER_LATE_NS late; so a reading from the word is behind by at most
   the period plus the helper's current wake-up delay.  When more than
   TICKER_REST_PERCENT % of a window of ticks are late (a machine too
   loaded to run the helper on time), the helper stops for TICKER_REST_NS
   and readings are exact.  docs/internals.md, "The clock", has the rest.

   The helper is not a thread of the program: a thread would show in the
   program's thread count (/proc/self/status, which some programs read
   before fork) and would clear glibc's __libc_single_threaded, which
   makes glibc's malloc, libstdc++'s shared_ptr and this runtime's locks
   take locked instructions.  It is a process sharing the program's
   memory, files and working directory (clone with CLONE_VM, CLONE_FILES,
   CLONE_FS), all signals blocked, no exit signal (the program's wait
   calls do not see it, no SIGCHLD), killed when the thread that started
   it ends (PR_SET_PDEATHSIG: the program's exit ends it at once).  It
   calls no C library function (its thread pointer is its parent's): raw
   system calls only.

   Idle programs: a tick that finds no reading since the last one makes
   the word invalid (readings are exact again) and the helper sleeps
   TICKER_DOZE_NS; a reading while it dozes asks it back.  After
   TICKER_IDLE_DOZES dozes without a reading it exits; the next reading
   starts a new one.  So a program that stops allocating costs nothing
   after a few dozen milliseconds.  fork: the child starts its own.  */

#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <x86intrin.h>

#include "internal.h"

#define TICKER_PERIOD_NS 1000000LL
#define TICKER_DOZE_NS 16000000LL
/* Ticks without a reading before the helper dozes: a thread of a loaded
   machine is often off its CPU for a millisecond or two.  */
#define TICKER_DOZE_AFTER 8
#define TICKER_IDLE_DOZES 4
#define TICKER_LATE_NS 2000000LL
/* After a late tick, the time on time before the word is read again.  */
#define TICKER_PUNCTUAL_NS 20000000LL
/* More than TICKER_REST_PERCENT % of TICKER_WINDOW ticks late: the helper
   stops for TICKER_REST_NS.  */
#define TICKER_WINDOW 256
#define TICKER_REST_PERCENT 10
#define TICKER_REST_NS 10000000000LL
#define TICKER_STACK_BYTES (64 * 1024)

struct clock_ticker clock_ticker;
__thread uint32_t clock_ticker_reads
    __attribute__ ((tls_model ("initial-exec")));

static _Atomic bool ticker_starting, ticker_given_up;
/* Over the process's helpers: ticks, ticks later than TICKER_LATE_NS,
   the latest one's delay, helpers started.  */
static _Atomic uint64_t ticks_count, late_count, late_max_ns, helpers_started,
    rests;
/* Readings from the word, sampled (each thread's 64th without a break):
   how many, how many behind by more than TICKER_LATE_NS, the most.  */
static _Atomic uint64_t lag_samples, lag_over, lag_max_ns;
static void *ticker_stack;
static pid_t ticker_pid;
/* The CPU time of the helpers reaped so far.  */
static uint64_t past_helpers_cpu_us;

/* A system call without the C library (no errno, no thread pointer).  */
static inline long
raw_syscall4 (long number, long a, long b, long c, long d)
{
  long result;
  register long r10 __asm__("r10") = d;
  __asm__ volatile("syscall"
                   : "=a"(result)
                   : "0"(number), "D"(a), "S"(b), "d"(c), "r"(r10)
                   : "rcx", "r11", "memory");
  return result;
}

static inline void
raise_to (_Atomic uint64_t *word, uint64_t value)
{
  uint64_t seen = atomic_load_explicit (word, memory_order_relaxed);
  while (seen < value
         && !atomic_compare_exchange_weak_explicit (
             word, &seen, value, memory_order_relaxed, memory_order_relaxed))
    ;
}

static void
ticker_raise (int64_t ns, uint64_t tsc)
{
  raise_to (&clock_ticker.now_ns, (uint64_t) ns);
  raise_to (&clock_ticker.tsc, tsc);
}

/* A reader's raise: a plain load and store, no locked instruction.  Two
   raising at once may leave the lower of their readings, a few hundred
   nanoseconds apart: a later reading from the word may then be that much
   before an exact one (depot_fold_block takes a negative lifetime as 0).  */
static inline void
raise_plainly (_Atomic uint64_t *word, uint64_t value)
{
  if (atomic_load_explicit (word, memory_order_relaxed) < value)
    atomic_store_explicit (word, value, memory_order_relaxed);
}

/* The helper's whole life.  Compiled without the stack protector: its
   thread pointer is its parent thread's, which may be gone.  */
static __attribute__ ((no_stack_protector)) int
ticker_main (void *unused)
{
  int idle = 0;
  int64_t due = 0, punctual_since = 0;
  unsigned ticks_in_window = 0, late_in_window = 0;
  (void) unused;

  raw_syscall4 (SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0);
  atomic_store (&ticker_starting, false);
  for (;;)
    {
      struct timespec now;
      raw_syscall4 (SYS_clock_gettime, CLOCK_MONOTONIC, (long) &now, 0, 0);
      int64_t ns = (int64_t) now.tv_sec * 1000000000LL + now.tv_nsec;
      uint64_t tsc = __rdtsc ();
      bool used = atomic_exchange_explicit (&clock_ticker.used, false,
                                            memory_order_relaxed);
      atomic_fetch_add_explicit (&ticks_count, 1, memory_order_relaxed);
      if (due != 0
          && ns - due > (int64_t) atomic_load_explicit (&late_max_ns,
                                                        memory_order_relaxed))
        atomic_store_explicit (&late_max_ns, (uint64_t) (ns - due),
                               memory_order_relaxed);
      /* Late: the machine is too loaded to run the helper on time, so
         exact readings until it has been on time for a while.  */
      if (due != 0 && ns - due > TICKER_LATE_NS)
        {
          atomic_fetch_add_explicit (&late_count, 1, memory_order_relaxed);
          punctual_since = ns;
          late_in_window++;
        }
      /* Late too often: the word is seldom read, the helper only costs.
         It rests; readings are exact until TICKER_REST_NS from now.  */
      if (++ticks_in_window == TICKER_WINDOW)
        {
          if (late_in_window * 100 > TICKER_WINDOW * TICKER_REST_PERCENT)
            {
              atomic_store (&clock_ticker.valid, false);
              atomic_store (&clock_ticker.rest_until_ns,
                            (uint64_t) (ns + TICKER_REST_NS));
              atomic_fetch_add_explicit (&rests, 1, memory_order_relaxed);
              return 0;
            }
          ticks_in_window = late_in_window = 0;
        }
      ticker_raise (ns, tsc);
      if (used)
        {
          idle = 0;
          due = ns + TICKER_PERIOD_NS;
          atomic_store_explicit (&clock_ticker.valid,
                                 ns - punctual_since >= TICKER_PUNCTUAL_NS,
                                 memory_order_release);
        }
      else if (++idle < TICKER_DOZE_AFTER)
        due = ns + TICKER_PERIOD_NS;
      else
        {
          atomic_store_explicit (&clock_ticker.valid, false,
                                 memory_order_relaxed);
          if (idle >= TICKER_DOZE_AFTER + TICKER_IDLE_DOZES)
            return 0;
          due = ns + TICKER_DOZE_NS;
        }
      struct timespec until
          = { .tv_sec = due / 1000000000LL, .tv_nsec = due % 1000000000LL };
      raw_syscall4 (SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME,
                    (long) &until, 0);
    }
}

/* Start the helper unless it runs, is starting or was given up.  Called
   from a reading that took the exact clock; keeps errno.  */
static void
ticker_start (void)
{
  if (atomic_load_explicit (&ticker_given_up, memory_order_relaxed)
      || atomic_load_explicit (&clock_ticker.alive, memory_order_acquire) != 0
      || atomic_exchange (&ticker_starting, true))
    return;
  int saved_errno = errno;
  sigset_t all, old;
  /* The last helper, gone: its zombie, and the CPU time it used.  */
  struct rusage used;
  if (ticker_pid > 0 && wait4 (ticker_pid, NULL, __WCLONE | WNOHANG, &used) > 0)
    past_helpers_cpu_us
        += (uint64_t) (used.ru_utime.tv_sec + used.ru_stime.tv_sec) * 1000000u
           + (uint64_t) (used.ru_utime.tv_usec + used.ru_stime.tv_usec);
  if (ticker_stack == NULL)
    ticker_stack = runtime_map (TICKER_STACK_BYTES);
  if (ticker_stack == NULL)
    {
      atomic_store (&ticker_given_up, true);
      errno = saved_errno;
      return;
    }
  sigfillset (&all);
  pthread_sigmask (SIG_SETMASK, &all, &old);
  ticker_pid = clone (ticker_main, (char *) ticker_stack + TICKER_STACK_BYTES,
                      CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SYSVSEM
                          | CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID,
                      NULL, NULL, NULL, (int *) &clock_ticker.alive);
  pthread_sigmask (SIG_SETMASK, &old, NULL);
  if (ticker_pid > 0)
    atomic_fetch_add_explicit (&helpers_started, 1, memory_order_relaxed);
  if (ticker_pid < 0)
    {
      /* Not allowed here (a sandbox, a limit on processes): exact
         readings, as clock_ticker=0.  */
      atomic_store (&ticker_given_up, true);
      atomic_store (&ticker_starting, false);
    }
  errno = saved_errno;
}

int64_t
clock_ticker_slow (bool sample)
{
  int64_t ns = clock_exact_ns ();
  if (sample)
    {
      int64_t behind = ns
                       - (int64_t) atomic_load_explicit (&clock_ticker.now_ns,
                                                         memory_order_relaxed);
      atomic_fetch_add_explicit (&lag_samples, 1, memory_order_relaxed);
      if (behind > TICKER_LATE_NS)
        atomic_fetch_add_explicit (&lag_over, 1, memory_order_relaxed);
      if (behind
          > (int64_t) atomic_load_explicit (&lag_max_ns, memory_order_relaxed))
        atomic_store_explicit (&lag_max_ns, (uint64_t) behind,
                               memory_order_relaxed);
    }
  clock_ticker_reads = 0;
  raise_plainly (&clock_ticker.now_ns, (uint64_t) ns);
  raise_plainly (&clock_ticker.tsc, clock_last_tsc);
  if (!atomic_load_explicit (&clock_ticker.used, memory_order_relaxed))
    atomic_store_explicit (&clock_ticker.used, true, memory_order_relaxed);
  if (runtime_options.clock_ticker
      && atomic_load_explicit (&clock_ticker.alive, memory_order_relaxed) == 0)
    ticker_start ();
  return ns;
}

void
clock_ticker_fork_child (void)
{
  /* The parent's helper is not the child's.  */
  atomic_store (&clock_ticker.valid, false);
  atomic_store (&clock_ticker.alive, 0);
  atomic_store (&ticker_starting, false);
  ticker_pid = 0;
}

static uint64_t
helper_cpu_ns (void)
{
  clockid_t clock;
  struct timespec used;
  if (ticker_pid <= 0 || clock_getcpuclockid (ticker_pid, &clock) != 0
      || clock_gettime (clock, &used) != 0)
    return 0;
  return (uint64_t) used.tv_sec * 1000000000u + (uint64_t) used.tv_nsec;
}

void
clock_ticker_report (void)
{
  if (!runtime_options.clock_ticker)
    return;
  log_printf ("clock: %lu helper(s) started, %lu ticks, %lu later than "
              "%lld us (the latest %lu us), %lu rests%s; the helpers used %lu "
              "us of CPU; "
              "%lu readings from the word sampled, %lu behind by "
              "more than %lld us, the most %lu us",
              (unsigned long) helpers_started, (unsigned long) ticks_count,
              (unsigned long) late_count, TICKER_LATE_NS / 1000,
              (unsigned long) (late_max_ns / 1000), (unsigned long) rests,
              ticker_given_up ? ", given up: exact readings" : "",
              (unsigned long) (past_helpers_cpu_us + helper_cpu_ns () / 1000),
              (unsigned long) lag_samples, (unsigned long) lag_over,
              TICKER_LATE_NS / 1000, (unsigned long) (lag_max_ns / 1000));
}
