/* A test module: counts every event it receives, by kind, and the memory
   and context events by site, and writes them to the file named by
   module_args=out=PATH at exit.  The arguments "refuse" and "crash"
   make it refuse to start, or fault in its handler on the first event.  */

#include <memprof/module.h>

#include <stdio.h>
#include <string.h>

#define SITES_MAX 256

static const char *const kind_names[MEMPROF_EVENT_KINDS]
    = { "load",          "store",     "alloc",          "free",
        "function-entry", "function-exit", "loop-entry",
        "loop-iteration", "loop-exit" };

static unsigned long long counts[MEMPROF_EVENT_KINDS];
static struct
{
  uint64_t site;
  uint32_t kind;
  unsigned long long count;
} sites[SITES_MAX];
static size_t sites_used;
static char out_path[512] = "count_module.txt";
static int crash;
static unsigned long long alloc_bytes;

static int
count_init (const char *arguments)
{
  if (strstr (arguments, "refuse"))
    return 1;
  crash = strstr (arguments, "crash") != NULL;
  const char *out = strstr (arguments, "out=");
  if (out)
    snprintf (out_path, sizeof out_path, "%.*s", (int) strcspn (out + 4, ","),
              out + 4);
  return 0;
}

static void
count_site (uint64_t site, uint32_t kind)
{
  for (size_t i = 0; i < sites_used; i++)
    if (sites[i].site == site && sites[i].kind == kind)
      {
        sites[i].count++;
        return;
      }
  if (sites_used < SITES_MAX)
    sites[sites_used++] = (typeof (sites[0])){ site, kind, 1 };
}

static void
count_handle (const struct memprof_event *events, size_t count)
{
  if (crash)
    *(volatile int *) 0 = 1;
  for (size_t i = 0; i < count; i++)
    {
      counts[events[i].kind]++;
      if (events[i].kind == MEMPROF_EVENT_ALLOC)
        alloc_bytes += events[i].size;
      else if (events[i].kind != MEMPROF_EVENT_FREE)
        count_site (events[i].site, events[i].kind);
    }
}

static void
count_finish (void)
{
  FILE *out = fopen (out_path, "w");
  if (out == NULL)
    return;
  for (int k = 0; k < MEMPROF_EVENT_KINDS; k++)
    fprintf (out, "%s %llu\n", kind_names[k], counts[k]);
  fprintf (out, "alloc-bytes %llu\n", alloc_bytes);
  for (size_t i = 0; i < sites_used; i++)
    {
      const struct memprof_site *site = memprof_site_of (sites[i].site);
      fprintf (out, "site %s %s %s:%u:%u %llu\n", kind_names[sites[i].kind],
               site->function, site->file, site->line, site->column,
               sites[i].count);
    }
  fclose (out);
}

const struct memprof_module memprof_module
    = { MEMPROF_MODULE_ABI_VERSION, (1u << MEMPROF_EVENT_KINDS) - 1, "count",
        count_init, count_handle, count_finish };
