/* stats=1: where did the instrumented accesses go?  Heap accesses are
   exact in every mode (the sum of the profile's TotalAccessCount).  With
   callbacks, every access is classified as it happens: the current
   thread's stack, a global segment of a loaded object, or elsewhere.
   With inline counters, the runtime sees only the shadow: at exit it sums
   the counters of the main thread's stack, of the global segments, and
   of every other mapping.  */

#define _GNU_SOURCE
#include "internal.h"
#include "small_heap.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Global segments remembered at start-up.  */
#define GLOBAL_RANGES_MAX 256

bool stats_enabled;
static struct address_range global_ranges[GLOBAL_RANGES_MAX];
static unsigned global_range_count;
static _Atomic uint64_t counted_stack, counted_globals, counted_elsewhere;
/* Accesses seen through the load and store hooks: callback mode.  */
static _Atomic uint64_t counted_by_hooks;

void
stats_start (void)
{
  stats_enabled = runtime_options.stats;
  if (stats_enabled)
    global_range_count = (unsigned) find_data_segments (
        global_ranges, GLOBAL_RANGES_MAX, true, NULL);
}

static bool
in_global_segment (uintptr_t address)
{
  for (unsigned i = 0; i < global_range_count; i++)
    if (address >= global_ranges[i].start && address < global_ranges[i].end)
      return true;
  return false;
}

void
stats_classify (uintptr_t address, uint64_t accesses)
{
  atomic_fetch_add_explicit (&counted_by_hooks, accesses, memory_order_relaxed);
  stats_classify_range (address, accesses);
}

void
stats_classify_range (uintptr_t address, uint64_t accesses)
{
  uintptr_t stack_low, stack_high;
  thread_stack_bounds (&stack_low, &stack_high);
  if (address >= stack_low && address < stack_high)
    atomic_fetch_add_explicit (&counted_stack, accesses, memory_order_relaxed);
  else if (in_global_segment (address))
    atomic_fetch_add_explicit (&counted_globals, accesses,
                               memory_order_relaxed);
  else
    atomic_fetch_add_explicit (&counted_elsewhere, accesses,
                               memory_order_relaxed);
}

/* ---- Inline counters: sum the shadow of address ranges ---- */

/* Pages of shadow asked about per mincore call.  */
#define MINCORE_CHUNK_PAGES 4096

static uint64_t
sum_counters (uintptr_t from, uintptr_t to)
{
  uint64_t total = 0;
  if (runtime_histogram)
    for (const uint8_t *c = (const uint8_t *) from; c < (const uint8_t *) to;
         c++)
      total += *c;
  else
    for (const uint64_t *c = (const uint64_t *) from; c < (const uint64_t *) to;
         c++)
      total += *c;
  return total;
}

/* The sum of the counters of [START, END), reading only shadow pages that
   are resident (the others hold zeros).  */
static uint64_t
shadow_sum (uintptr_t start, uintptr_t end)
{
  static unsigned char resident[MINCORE_CHUNK_PAGES];
  const uintptr_t page = 4096;
  uintptr_t shadow_start, shadow_end;
  uint64_t total = 0;

  if (runtime_histogram)
    {
      shadow_start = (uintptr_t) memprof_histogram_shadow_for (
          __memprof_shadow_base, start);
      shadow_end = (uintptr_t) memprof_histogram_shadow_for (
          __memprof_shadow_base, end);
    }
  else
    {
      shadow_start
          = (uintptr_t) memprof_shadow_for (__memprof_shadow_base, start);
      shadow_end = (uintptr_t) memprof_shadow_for (
          __memprof_shadow_base, end + MEMPROF_GRANULE_SIZE - 1);
    }
  for (uintptr_t chunk = shadow_start & ~(page - 1); chunk < shadow_end;
       chunk += MINCORE_CHUNK_PAGES * page)
    {
      uintptr_t chunk_end = chunk + MINCORE_CHUNK_PAGES * page;
      if (chunk_end > ROUND_UP (shadow_end, page))
        chunk_end = ROUND_UP (shadow_end, page);
      if (mincore ((void *) chunk, chunk_end - chunk, resident) != 0)
        continue;
      for (uintptr_t p = chunk; p < chunk_end; p += page)
        if (resident[(p - chunk) / page] & 1)
          total += sum_counters (p > shadow_start ? p : shadow_start,
                                 p + page < shadow_end ? p + page : shadow_end);
    }
  return total;
}

/* Read /proc/self/maps without stdio; call VISIT for every mapping.  */
static void
for_each_mapping (void (*visit) (uintptr_t, uintptr_t, const char *, void *),
                  void *cookie)
{
  static char buffer[1 << 16];
  char line[512];
  size_t used = 0;
  int fd = open ("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  ssize_t n;

  if (fd < 0)
    return;
  while ((n = read (fd, buffer, sizeof buffer)) > 0)
    for (ssize_t i = 0; i < n; i++)
      {
        if (buffer[i] != '\n')
          {
            if (used + 1 < sizeof line)
              line[used++] = buffer[i];
            continue;
          }
        line[used] = '\0';
        used = 0;
        char *end;
        uintptr_t start = strtoul (line, &end, 16);
        uintptr_t stop = strtoul (end + 1, &end, 16);
        const char *name = strchr (line, '/');
        if (name == NULL)
          name = strchr (line, '[');
        visit (start, stop, name ? name : "", cookie);
      }
  close (fd);
}

struct scan
{
  uint64_t stack, globals, everything;
};

static void
scan_mapping (uintptr_t start, uintptr_t end, const char *name, void *cookie)
{
  struct scan *scan = cookie;
  uintptr_t shadow_end
      = __memprof_shadow_base
        + ((1UL << 47) >> MEMPROF_SHADOW_SCALE); /* the shadow itself */
  uint64_t sum;

  if ((start >= __memprof_shadow_base && start < shadow_end)
      || end > (1UL << 47) || end - start > (1UL << 40))
    return; /* the shadow, the vsyscall page, huge reservations */
  sum = shadow_sum (start, end);
  scan->everything += sum;
  if (strcmp (name, "[stack]") == 0)
    scan->stack += sum;
}

void
stats_report (uint64_t heap_accesses, uint64_t live_heap_counters)
{
  uint64_t stack, globals, elsewhere, total;
  const char *how;

  if (!stats_enabled)
    return;
  uint64_t too_early = runtime_allocations_too_early;
  if (too_early != 0)
    log_printf ("stats: %lu allocations made before thread-local storage "
                "was set up (in IFUNC resolvers) are not in the profile",
                (unsigned long) too_early);
  uint64_t reentered = runtime_allocations_reentered;
  uint64_t deferred = runtime_frees_deferred;
  if (reentered != 0 || deferred != 0)
    log_printf ("stats: %lu allocations made by signal handlers inside the "
                "runtime's locked paths are blocks of the runtime's reserve, "
                "not in the profile; %lu frees of other blocks made there "
                "waited for the end of the path",
                (unsigned long) reentered, (unsigned long) deferred);
  small_heap_report ();
  uint64_t given_up = peak_walks_given_up;
  if (given_up != 0)
    log_printf ("stats: %lu walks of the live blocks for the heap's peak "
                "were given up in signal handlers (a timeline sample not "
                "kept, or the peak's breakdown copied again later)",
                (unsigned long) given_up);
  stack = counted_stack;
  globals = counted_globals;
  elsewhere = counted_elsewhere;
  total = stack + globals + elsewhere;
  how = "counted per access (callbacks)";
  if (counted_by_hooks == 0)
    {
      /* No callback ran: inline counters.  */
      struct scan scan = { 0, 0, 0 };
      for_each_mapping (scan_mapping, &scan);
      for (unsigned i = 0; i < global_range_count; i++)
        scan.globals
            += shadow_sum (global_ranges[i].start, global_ranges[i].end);
      stack = scan.stack;
      globals = scan.globals;
      /* Freed blocks' counters were folded and cleared; live blocks' are
         still in the shadow.  */
      elsewhere = scan.everything - stack - globals - live_heap_counters
                  + heap_accesses;
      total = stack + globals + elsewhere;
      how = "from the shadow at exit; other threads' stacks count as other";
    }
  uint64_t other = elsewhere > heap_accesses ? elsewhere - heap_accesses : 0;
  log_printf ("stats: %lu instrumented accesses (%s): heap %lu (%.1f%%), "
              "stack %lu (%.1f%%), globals %lu (%.1f%%), other %lu (%.1f%%)",
              (unsigned long) total, how, (unsigned long) heap_accesses,
              total ? 100.0 * heap_accesses / total : 0.0,
              (unsigned long) stack, total ? 100.0 * stack / total : 0.0,
              (unsigned long) globals, total ? 100.0 * globals / total : 0.0,
              (unsigned long) other, total ? 100.0 * other / total : 0.0);
}
