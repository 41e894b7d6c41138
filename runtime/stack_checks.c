/* The thread's stack bounds for the plugin's run-time stack checks
   (gcc-plugin/stack_checks.cc): a function whose pointer parameter the
   stack analysis cannot prove (its callers are unknown) tests the
   parameter once at entry, (address - low) < size, and skips the
   counter updates of the accesses made through it when it points into
   the running thread's own stack.

   Two initial-exec TLS words, written only by their own thread: 0 and 0
   until stack.c has found the thread's stack (pthread_getattr_np, at its
   first capture), so that every check fails and every access is counted
   until then.  A fiber's stack, a sigaltstack or another thread's stack
   is never inside these bounds: accesses there stay counted.  An
   executable built with the plugin defines both weak (local-exec
   access); this definition wins in a static link.  */

#include "internal.h"

/* At most this much below the top of the stack is published.  Under
   `ulimit -s unlimited' glibc gives the main thread all the space down
   to the mapping below it, where the kernel's bottom-up layout may
   later map memory that malloc hands out; a frame deeper than this is
   only counted.  */
#define STACK_CHECK_MAX_SIZE ((uintptr_t) 256 << 20)

MEMPROF_EXPORT __thread uintptr_t __memprof_stack_low
    __attribute__ ((tls_model ("initial-exec")));
MEMPROF_EXPORT __thread uintptr_t __memprof_stack_size
    __attribute__ ((tls_model ("initial-exec")));

void
publish_thread_stack (uintptr_t low, uintptr_t high)
{
  if (high <= low)
    return;
  if (high - low > STACK_CHECK_MAX_SIZE)
    low = high - STACK_CHECK_MAX_SIZE;
  __memprof_stack_low = low;
  __memprof_stack_size = high - low;
}
