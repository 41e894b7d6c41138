/* Strided accesses counted at a loop's exit.  The plugin
   (gcc-plugin/combine.cc, "strided") counts in a register how many times
   an access ran in a loop, where its address moves by the same constant
   STEP each iteration and it runs once in every iteration but the last;
   at the loop's exits it calls this with the address of the first run:
   run J was at FIRST + J * STEP, and each run counts WEIGHT accesses.
   The counters get what one update per run would have given them, a
   granule at a time: the runs whose address falls in one granule are
   consecutive, so each granule the runs cross is updated once.  */

#include "internal.h"

/* How many of EXECUTIONS runs from ADDRESS, STEP apart, stay in the
   granule of ADDRESS (at least 1).  */
static uint64_t
runs_in_granule (uintptr_t address, long step, uint64_t executions)
{
  uint64_t runs;
  if (step == 0)
    return executions;
  if (step > 0)
    runs = (MEMPROF_GRANULE_SIZE - 1 - (address & (MEMPROF_GRANULE_SIZE - 1)))
               / (uint64_t) step
           + 1;
  else
    runs = (address & (MEMPROF_GRANULE_SIZE - 1)) / (0 - (uint64_t) step) + 1;
  return runs < executions ? runs : executions;
}

MEMPROF_EXPORT void
__memprof_strided_access (const void *first, long step,
                          unsigned long executions, unsigned long weight)
{
  uintptr_t address = (uintptr_t) first;

  if (executions == 0 || weight == 0 || __memprof_shadow_base == 0)
    return;
  if (runtime_histogram)
    {
      /* Histogram counters are per 8 bytes: one run at a time.  */
      for (; executions > 0; executions--, address += (uintptr_t) step)
        __memprof_range_access_weighted ((const void *) address, 1, weight);
      return;
    }
  if (UNLIKELY (stats_enabled))
    stats_classify_range (address, executions * weight);
  uint64_t size = step < 0 ? 0 - (uint64_t) step : (uint64_t) step;
  if (size != 0 && (size & (size - 1)) == 0 && size < MEMPROF_GRANULE_SIZE)
    {
      /* A step that divides the granule: after the first granule, every
         granule but the last gets the same number of runs, and the
         counters are consecutive (no division per granule).  */
      uint64_t runs = runs_in_granule (address, step, executions);
      uint64_t *counter = memprof_shadow_for (__memprof_shadow_base, address);
      *counter += runs * weight;
      executions -= runs;
      uint64_t per_granule = MEMPROF_GRANULE_SIZE / size;
      ptrdiff_t direction = step < 0 ? -1 : 1;
      for (; executions >= per_granule; executions -= per_granule)
        *(counter += direction) += per_granule * weight;
      if (executions > 0)
        *(counter + direction) += executions * weight;
      return;
    }
  while (executions > 0)
    {
      uint64_t runs = runs_in_granule (address, step, executions);
      *memprof_shadow_for (__memprof_shadow_base, address) += runs * weight;
      address += runs * (uintptr_t) step;
      executions -= runs;
    }
}
