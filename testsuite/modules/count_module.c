/* A test module: counts every event it receives, by kind, and the memory
   and context events by site, the memory events inside a live heap
   block, the threads, and writes them to the file named by
   module_args=out=PATH at exit.  The arguments "refuse", "crash" and
   "overflow" make it refuse to start, fault in its handler on the first
   event, or overflow its stack there.
   Built with -DCOUNT_ABI_VERSION=N, it claims that ABI version.  */

#include <memprof/module.h>

#include <stdio.h>
#include <string.h>

#define SITES_MAX 256
#define BLOCKS_MAX 64
#define THREADS_MAX 64

#ifndef COUNT_ABI_VERSION
#define COUNT_ABI_VERSION MEMPROF_MODULE_ABI_VERSION
#endif

static const char *const kind_names[MEMPROF_EVENT_KINDS]
    = { "load",       "store",          "alloc",
        "free",       "function-entry", "function-exit",
        "loop-entry", "loop-iteration", "loop-exit" };

static unsigned long long counts[MEMPROF_EVENT_KINDS];
static struct
{
  uint64_t site;
  uint32_t kind;
  unsigned long long count;
} sites[SITES_MAX];
static size_t sites_used;
static char out_path[512] = "count_module.txt";
static int crash, overflow;

/* Recursion without end, which the compiler cannot turn into a loop.  */
static int
recurse (int depth)
{
  volatile char frame[256];
  frame[0] = (char) depth;
  return recurse (depth + 1) + frame[0];
}
static unsigned long long alloc_bytes;
static unsigned long long in_heap[2]; /* loads, stores */
static struct
{
  uint64_t address, size;
} blocks[BLOCKS_MAX];
static unsigned char threads_seen[THREADS_MAX];

static void
add_block (uint64_t address, uint64_t size)
{
  for (size_t i = 0; i < BLOCKS_MAX; i++)
    if (blocks[i].address == 0)
      {
        blocks[i].address = address;
        blocks[i].size = size;
        return;
      }
}

static void
remove_block (uint64_t address)
{
  for (size_t i = 0; i < BLOCKS_MAX; i++)
    if (blocks[i].address == address)
      blocks[i].address = 0;
}

static int
inside_block (uint64_t address, uint64_t size)
{
  for (size_t i = 0; i < BLOCKS_MAX; i++)
    if (blocks[i].address != 0 && address >= blocks[i].address
        && address + size <= blocks[i].address + blocks[i].size)
      return 1;
  return 0;
}

static int
count_init (const char *arguments)
{
  if (strstr (arguments, "refuse"))
    return 1;
  crash = strstr (arguments, "crash") != NULL;
  overflow = strstr (arguments, "overflow") != NULL;
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
  if (overflow)
    recurse (0);
  for (size_t i = 0; i < count; i++)
    {
      const struct memprof_event *e = &events[i];
      counts[e->kind]++;
      threads_seen[e->thread < THREADS_MAX ? e->thread : 0] = 1;
      if (e->kind == MEMPROF_EVENT_ALLOC)
        {
          alloc_bytes += e->size;
          add_block (e->address, e->size);
        }
      else if (e->kind == MEMPROF_EVENT_FREE)
        remove_block (e->address);
      else
        {
          count_site (e->site, e->kind);
          if (e->kind <= MEMPROF_EVENT_STORE)
            in_heap[e->kind] += inside_block (e->address, e->size);
        }
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
  fprintf (out, "load-in-heap %llu\nstore-in-heap %llu\n", in_heap[0],
           in_heap[1]);
  int threads = 0;
  for (int t = 0; t < THREADS_MAX; t++)
    threads += threads_seen[t];
  fprintf (out, "threads %d\n", threads);
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
    = { COUNT_ABI_VERSION, (1u << MEMPROF_EVENT_KINDS) - 1,
        "count",           count_init,
        count_handle,      count_finish };
