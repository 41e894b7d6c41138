/* Count accesses by hand, as instrumented code would (memprof/abi.h),
   until the plugin instruments these programs.  Built with -DNO_RUNTIME
   for the baseline run (no runtime linked), touch does nothing.  */

#ifndef COMPAT_TOUCH_H
#define COMPAT_TOUCH_H

#include <stdint.h>

#ifdef NO_RUNTIME
/* Still an opaque use of the block, so that GCC keeps the allocation in
   the baseline and LD_PRELOAD builds as in the profiled one.  */
static inline void
touch (const void *address, unsigned times)
{
  __asm__ volatile("" : : "r"(address), "r"(times) : "memory");
}
#else
#include <memprof/abi.h>
static inline void
touch (const void *address, unsigned times)
{
  for (unsigned i = 0; i < times; i++)
    ++*memprof_shadow_for (__memprof_shadow_base, (uintptr_t) address);
}
#endif

#endif
