/* lifetime: a value-pattern and object-lifetime profiler, as a GCC
   MemProf module (docs/modules.md).  Two tables:

   - constant-loads: the loads that saw one value on every execution of
     the run (at least min= times, default 2): candidates for value
     specialization or hoisting;
   - local-objects: per allocation call site, how many of its heap
     objects were freed within the loop iteration that allocated them
     (iteration-local: the innermost loop around the allocation was still
     in that iteration), and within the call that allocated them
     (call-local: the innermost instrumented function around the
     allocation had not returned yet): candidates for stack allocation or
     for reusing one object across iterations.

   The allocation call site is the return address of the malloc (or
   new) call, written as @FILE+0xOFFSET so that `memprof module-show`
   symbolizes it with the binary's DWARF; the loop and the function are
   instruction ids, written as "function file:line:column".

   Events: load-value, function, loop
   (-fplugin-arg-memprof-events=@lifetime.events); allocation from the
   runtime.  Arguments (module_args): out=FILE (default
   memprof-lifetime.txt), min=N.  Per thread: at most STACK_MAX nested
   calls and loops are followed (deeper ones are ignored); THREADS_MAX
   threads (the others share the last slot).

   Build: gcc -shared -fPIC -O2 $(pkg-config --cflags memprof) \
            -o lifetime.so modules/lifetime.c  */

#define _GNU_SOURCE
#include "common.h"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#define STACK_MAX 256
#define THREADS_MAX 64

struct frame
{
  uint64_t site;
  uint64_t instance; /* a call, or a loop's current iteration */
};

struct thread_state
{
  int calls, loops; /* depths; may exceed STACK_MAX */
  struct frame call[STACK_MAX], loop[STACK_MAX];
};

struct load_site
{
  uint64_t site; /* 0: empty */
  uint64_t value, count;
  int constant;
};

struct allocation_site
{
  uint64_t pc;             /* 0: empty */
  uint64_t function, loop; /* sites at the first allocation, or 0 */
  uint64_t context;
  uint64_t allocations, iteration_local, call_local;
};

struct block
{
  uint64_t address; /* 0: empty */
  uint64_t pc;      /* its allocation site */
  uint32_t thread;
  int calls, loops; /* depths at the allocation */
  uint64_t call_instance, iteration_instance;
};

static struct thread_state threads[THREADS_MAX];
static uint64_t instances;
static struct load_site *loads;
static size_t loads_capacity, loads_used;
static struct allocation_site *sites;
static size_t sites_capacity, sites_used;
static struct block *blocks;
static size_t blocks_capacity, blocks_used;
static char out_path[1024] = "memprof-lifetime.txt";
static unsigned long long min_loads = 2;

MEMPROF_TABLE (load, struct load_site, site)
MEMPROF_TABLE (site, struct allocation_site, pc)
MEMPROF_TABLE (block, struct block, address)

/* ---- The events ---- */

static void
on_load (uint64_t site, uint64_t value)
{
  if (!load_reserve (&loads, &loads_capacity, loads_used))
    return;
  struct load_site *load = load_slot (loads, loads_capacity, site);
  if (load->site == 0)
    {
      *load = (struct load_site){ site, value, 0, 1 };
      loads_used++;
    }
  else if (load->value != value)
    load->constant = 0;
  load->count++;
}

/* Pop STACK (DEPTH frames) down to and including the innermost frame of
   SITE; nothing when SITE is not on it (its entry was not seen).  */
static void
pop_to (struct frame *stack, int *depth, uint64_t site)
{
  if (*depth > STACK_MAX)
    {
      (*depth)--;
      return;
    }
  for (int i = *depth - 1; i >= 0; i--)
    if (stack[i].site == site)
      {
        *depth = i;
        return;
      }
}

static void
push (struct frame *stack, int *depth, uint64_t site)
{
  if (*depth < STACK_MAX)
    stack[*depth] = (struct frame){ site, ++instances };
  (*depth)++;
}

static void
on_alloc (struct thread_state *t, uint32_t thread,
          const struct memprof_event *e)
{
  if (!site_reserve (&sites, &sites_capacity, sites_used)
      || !block_reserve (&blocks, &blocks_capacity, blocks_used))
    return;
  struct allocation_site *site = site_slot (sites, sites_capacity, e->value);
  int calls = t->calls < STACK_MAX ? t->calls : 0;
  int loops = t->loops < STACK_MAX ? t->loops : 0;
  if (site->pc == 0)
    {
      *site = (struct allocation_site){ e->value,
                                        calls ? t->call[calls - 1].site : 0,
                                        loops ? t->loop[loops - 1].site : 0,
                                        e->site,
                                        0,
                                        0,
                                        0 };
      sites_used++;
    }
  site->allocations++;
  struct block *b = block_slot (blocks, blocks_capacity, e->address);
  if (b->address != e->address)
    blocks_used++;
  *b = (struct block){ e->address,
                       e->value,
                       thread,
                       calls,
                       loops,
                       calls ? t->call[calls - 1].instance : 0,
                       loops ? t->loop[loops - 1].instance : 0 };
}

static void
on_free (struct thread_state *t, uint32_t thread, uint64_t address)
{
  if (blocks_capacity == 0)
    return;
  struct block *b = block_slot (blocks, blocks_capacity, address);
  if (b->address != address)
    return;
  struct block freed = *b;
  block_remove (blocks, blocks_capacity, b);
  blocks_used--;
  /* The site by its pc: the table may have moved since.  */
  struct allocation_site *site = site_slot (sites, sites_capacity, freed.pc);
  if (freed.thread != thread || site->pc != freed.pc)
    return;
  if (freed.loops > 0 && t->loops >= freed.loops && t->loops <= STACK_MAX
      && t->loop[freed.loops - 1].instance == freed.iteration_instance)
    site->iteration_local++;
  if (freed.calls > 0 && t->calls >= freed.calls && t->calls <= STACK_MAX
      && t->call[freed.calls - 1].instance == freed.call_instance)
    site->call_local++;
}

static void
handle_event (const struct memprof_event *e)
{
  uint32_t thread = e->thread < THREADS_MAX ? e->thread : THREADS_MAX - 1;
  struct thread_state *t = &threads[thread];
  switch (e->kind)
    {
    case MEMPROF_EVENT_LOAD:
      on_load (e->site, e->value);
      return;
    case MEMPROF_EVENT_ALLOC:
      on_alloc (t, e->thread, e);
      return;
    case MEMPROF_EVENT_FREE:
      on_free (t, e->thread, e->address);
      return;
    case MEMPROF_EVENT_FUNCTION_ENTRY:
      push (t->call, &t->calls, e->site);
      return;
    case MEMPROF_EVENT_FUNCTION_EXIT:
      pop_to (t->call, &t->calls, e->site);
      return;
    case MEMPROF_EVENT_LOOP_ENTRY:
      push (t->loop, &t->loops, e->site);
      return;
    case MEMPROF_EVENT_LOOP_ITERATION:
      /* A new iteration of the innermost frame of this loop.  */
      for (int i = (t->loops < STACK_MAX ? t->loops : STACK_MAX) - 1; i >= 0;
           i--)
        if (t->loop[i].site == e->site)
          {
            t->loops = i + 1;
            t->loop[i].instance = ++instances;
            return;
          }
      return;
    case MEMPROF_EVENT_LOOP_EXIT:
      pop_to (t->loop, &t->loops, e->site);
      return;
    default:
      return;
    }
}

/* ---- The module ---- */

static int
lifetime_init (const char *arguments)
{
  char min[32];
  module_argument (arguments, "out", out_path, sizeof out_path);
  if (module_argument (arguments, "min", min, sizeof min))
    min_loads = strtoull (min, NULL, 10);
  return 0;
}

static void
lifetime_handle (const struct memprof_event *events, size_t count)
{
  for (size_t i = 0; i < count; i++)
    handle_event (&events[i]);
}

/* A return address as @FILE+0xOFFSET: the ELF address of the call
   instruction's last byte in its file, as symbolizers want it.  */
static void
print_code_address (FILE *out, uint64_t pc)
{
  Dl_info info;
  struct link_map *map = NULL;
  char path[4096];
  if (pc == 0
      || !dladdr1 ((void *) (uintptr_t) (pc - 1), &info, (void **) &map,
                   RTLD_DL_LINKMAP)
      || map == NULL)
    {
      fprintf (out, "0x%llx", (unsigned long long) pc);
      return;
    }
  const char *file = map->l_name;
  if (file == NULL || file[0] == '\0')
    {
      /* The main program.  */
      ssize_t length = readlink ("/proc/self/exe", path, sizeof path - 1);
      path[length > 0 ? length : 0] = '\0';
      file = path;
    }
  fprintf (out, "@%s+0x%llx", file,
           (unsigned long long) (pc - 1 - map->l_addr));
}

static int
by_allocations (const void *a, const void *b)
{
  const struct allocation_site *x = a, *y = b;
  return x->allocations < y->allocations   ? 1
         : x->allocations > y->allocations ? -1
                                           : 0;
}

static int
by_count (const void *a, const void *b)
{
  const struct load_site *x = a, *y = b;
  return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

static void
lifetime_finish (void)
{
  FILE *out = fopen (out_path, "w");
  size_t n = 0;
  if (out == NULL)
    return;
  fprintf (out, "memprof-module\tlifetime\n");
  fprintf (out, "table\tconstant-loads\nload\tvalue\tloads\n");
  for (size_t i = 0; i < loads_capacity; i++)
    if (loads[i].site != 0 && loads[i].constant && loads[i].count >= min_loads)
      loads[n++] = loads[i];
  qsort (loads, n, sizeof *loads, by_count);
  for (size_t i = 0; i < n; i++)
    {
      module_print_site (out, loads[i].site);
      fprintf (out, "\t%lld\t%llu\n", (long long) loads[i].value,
               (unsigned long long) loads[i].count);
    }

  fprintf (out, "table\tlocal-objects\nallocation\tfunction\tloop\t"
                "allocations\titeration-local\tcall-local\tcontext\n");
  n = 0;
  for (size_t i = 0; i < sites_capacity; i++)
    if (sites[i].pc != 0)
      sites[n++] = sites[i];
  qsort (sites, n, sizeof *sites, by_allocations);
  for (size_t i = 0; i < n; i++)
    {
      print_code_address (out, sites[i].pc);
      fputc ('\t', out);
      module_print_site (out, sites[i].function);
      fputc ('\t', out);
      module_print_site (out, sites[i].loop);
      fprintf (out, "\t%llu\t%llu\t%llu\t%llu\n",
               (unsigned long long) sites[i].allocations,
               (unsigned long long) sites[i].iteration_local,
               (unsigned long long) sites[i].call_local,
               (unsigned long long) sites[i].context);
    }
  module_print_notes (out);
  fclose (out);
}

/* What the plugin instruments for it:
   -fplugin-arg-memprof-events=@lifetime.so reads this (or name lifetime.events).  */
MEMPROF_MODULE_EVENTS ("load-value function loop allocation");

const struct memprof_module memprof_module = {
  MEMPROF_MODULE_ABI_VERSION,
  MEMPROF_EVENT_BIT (MEMPROF_EVENT_LOAD) | MEMPROF_EVENTS_FUNCTION
      | MEMPROF_EVENTS_LOOP | MEMPROF_EVENTS_ALLOCATION,
  "lifetime",
  lifetime_init,
  lifetime_handle,
  lifetime_finish,
};
