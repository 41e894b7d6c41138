/* Sampled access counting, the runtime's side (bursty tracing): code built
   with -fplugin-arg-memprof-sample-accesses=RATE has a plain and a
   counting copy of every function that counts accesses
   (gcc-plugin/bursts.cc).  Its checks -- at function entries and loop
   back edges -- decrement this thread's countdown, which runs down
   through a period: a gap (BURST + GAP - 1 down to BURST: plain code),
   then a burst (BURST - 1 down to 0: counting code).  A check whose copy
   does not match calls __memprof_access_switch, which says which copy
   runs, and at -1 starts the next period with a gap of random length
   (mean GAP).  The counting code adds RATE = (BURST + GAP) / BURST per
   access, so the shadow holds estimates; the side file says so
   (access_sample_rate, the largest RATE seen).

   The countdown is initial-exec TLS: the instrumented code reads it with
   one %fs-relative access (the runtime is loaded with the program, never
   dlopened).  A new thread starts at 0: its first check reaches -1 and
   starts its first gap.  The phase is the countdown alone, so whichever
   check sees a burst end (a plain copy's, after a call returned) ends
   it.  */

#include <limits.h>

#include "internal.h"

MEMPROF_EXPORT __thread long __memprof_access_countdown
    __attribute__ ((tls_model ("initial-exec")));

/* A gap's length: uniform from GAP/2 to GAP + GAP/2 (mean GAP, for even
   GAP), so that bursts do not fall at the same place of a program whose
   loops repeat in step with a fixed period (measured: a loop nest of
   exactly 1000 checks a round, sampled with period 10000, never counted
   what ran after its inner loop).  xorshift64, per thread.  */
static __thread uint64_t gap_random
    __attribute__ ((tls_model ("initial-exec")));

/* The switch and what it calls use general registers only (see
   __memprof_access_switch_preserving).  */
#define GENERAL_REGISTERS_ONLY __attribute__ ((target ("general-regs-only")))

GENERAL_REGISTERS_ONLY static long
gap_length (long gap)
{
  uint64_t x = gap_random;
  if (x == 0)
    x = ((uint64_t) (uintptr_t) &gap_random) * 0x9e3779b97f4a7c15ull | 1;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  gap_random = x;
  if (gap < 2)
    return gap;
  return gap / 2 + (long) (x % (uint64_t) (gap + 1 - (gap & 1)));
}

/* The largest RATE a period has started with; 0 before any; and the
   BURST that came with it.  */
static _Atomic uint64_t burst_rate;
_Atomic uint64_t __memprof_access_burst_checks;
/* Two rates seen (the first two), reported with the profile: the switch
   itself calls no function that may touch a vector register.  */
static _Atomic uint64_t mixed_rates[2];
static atomic_bool mixed_rates_reported;

GENERAL_REGISTERS_ONLY static void
note_rate (long burst, long gap)
{
  uint64_t rate = (uint64_t) ((burst + gap) / burst);
  uint64_t seen = atomic_load_explicit (&burst_rate, memory_order_relaxed);
  if (LIKELY (seen == rate))
    return;
  if (seen != 0)
    {
      uint64_t none = 0;
      if (atomic_compare_exchange_strong (&mixed_rates[0], &none, seen))
        atomic_store (&mixed_rates[1], rate);
    }
  atomic_store_explicit (&__memprof_access_burst_checks, (uint64_t) burst,
                         memory_order_relaxed);
  while (seen < rate
         && !atomic_compare_exchange_weak (&burst_rate, &seen, rate))
    ;
}

/* The switch (see abi.h); general registers only: the preserving switch
   keeps those alone for its callers.  */
int __memprof_access_switch_body (long burst, long gap);

GENERAL_REGISTERS_ONLY int
__memprof_access_switch_body (long burst, long gap)
{
  long countdown = __memprof_access_countdown;
  if (UNLIKELY (burst < 1 || gap < 0))
    return 0;
  if (countdown < 0)
    {
      /* The period is over: this check is the next gap's first.  */
      note_rate (burst, gap);
      __memprof_access_countdown = burst + gap_length (gap) - 1;
      return 0;
    }
  return countdown < burst;
}

/* The switch for the checks of copied functions (gcc-plugin/bursts.cc):
   its callers' asm statement moved the stack below their red zone and
   counts on every register but %rax and the flags being kept, so it
   saves the rest of the caller-saved general registers (the switch uses
   no vector register) and aligns the stack for the call.  */
#if defined(__x86_64__)
MEMPROF_EXPORT __attribute__ ((naked)) int
__memprof_access_switch_preserving (long burst, long gap)
{
  __asm__("push %rbp\n\t"
          "mov %rsp, %rbp\n\t"
          "and $-16, %rsp\n\t"
          "push %rcx\n\t"
          "push %rdx\n\t"
          "push %rsi\n\t"
          "push %rdi\n\t"
          "push %r8\n\t"
          "push %r9\n\t"
          "push %r10\n\t"
          "push %r11\n\t"
          "call __memprof_access_switch_body\n\t"
          "pop %r11\n\t"
          "pop %r10\n\t"
          "pop %r9\n\t"
          "pop %r8\n\t"
          "pop %rdi\n\t"
          "pop %rsi\n\t"
          "pop %rdx\n\t"
          "pop %rcx\n\t"
          "mov %rbp, %rsp\n\t"
          "pop %rbp\n\t"
          "ret");
}
#endif

MEMPROF_EXPORT int
__memprof_access_switch (long burst, long gap)
{
  return __memprof_access_switch_body (burst, gap);
}

/* See internal.h.  */
uint64_t
access_sample_rate_of_profile (void)
{
  uint64_t first = atomic_load (&mixed_rates[0]);
  if (first != 0 && !atomic_exchange (&mixed_rates_reported, true))
    log_printf ("modules sample accesses at different rates (1 in %llu and "
                "1 in %llu): the counts stay estimates, with bursts and "
                "gaps of whichever module a check ends them in",
                (unsigned long long) first,
                (unsigned long long) atomic_load (&mixed_rates[1]));
  uint64_t rate = atomic_load_explicit (&burst_rate, memory_order_relaxed);
  uint64_t option = (uint64_t) runtime_options.access_sample_rate;
  return rate > option ? rate : option;
}

/* See internal.h.  */
unsigned long
library_access_weight (void)
{
  uint64_t burst = atomic_load_explicit (&__memprof_access_burst_checks,
                                         memory_order_relaxed);
  if (LIKELY (burst == 0))
    return 1;
  if ((unsigned long) __memprof_access_countdown >= burst)
    return 0;
  return (unsigned long) atomic_load_explicit (&burst_rate,
                                               memory_order_relaxed);
}
