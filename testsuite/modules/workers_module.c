/* A module on workers (ABI version 2) that fails on purpose
   (testsuite/modules/run.py): module_args "refuse" makes init refuse,
   "crash" makes worker 1 fault on its first batch, "merge" makes merge
   fault.  Otherwise it writes the memory events each worker got to the
   file named by out=PATH.  */

#include <memprof/module.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *arguments_given;
static unsigned long long counts[16];

static int
workers_init (const char *arguments)
{
  arguments_given = arguments;
  return strstr (arguments, "refuse") != NULL;
}

static void *
workers_start (unsigned worker, unsigned workers)
{
  return &counts[worker];
}

static void
workers_handle (void *state, const struct memprof_event *events, size_t count)
{
  unsigned long long *n = state;
  if (n == &counts[1] && strstr (arguments_given, "crash"))
    *(volatile int *) 16 = 1;
  for (size_t i = 0; i < count; i++)
    *n += events[i].kind == MEMPROF_EVENT_LOAD
          || events[i].kind == MEMPROF_EVENT_STORE;
}

static void
workers_merge (void *const *states, unsigned workers)
{
  if (strstr (arguments_given, "merge"))
    *(volatile int *) 16 = 1;
}

static void
workers_finish (void)
{
  const char *out = strstr (arguments_given, "out=");
  FILE *f = out ? fopen (out + 4, "w") : NULL;
  if (f == NULL)
    return;
  for (int i = 0; i < 16; i++)
    fprintf (f, "%llu\n", counts[i]);
  fclose (f);
}

const struct memprof_module memprof_module = {
  MEMPROF_MODULE_ABI_VERSION,
  MEMPROF_EVENTS_MEMORY | MEMPROF_EVENTS_LOOP,
  "workers",
  workers_init,
  NULL,
  workers_finish,
  .workers = 2,
  .worker_start = workers_start,
  .worker_handle = workers_handle,
  .merge = workers_merge,
};
