/* A module that reads every event and does nothing else: what the queue
   alone costs (bench/modules_overhead.py).  */

#include <memprof/module.h>

static volatile uint64_t sum;

static void
null_handle (const struct memprof_event *events, size_t count)
{
  uint64_t total = 0;
  for (size_t i = 0; i < count; i++)
    total += events[i].address ^ events[i].site;
  sum += total;
}

const struct memprof_module memprof_module = { MEMPROF_MODULE_ABI_VERSION,
                                               (1u << MEMPROF_EVENT_KINDS) - 1,
                                               "null",
                                               NULL,
                                               null_handle,
                                               NULL };
