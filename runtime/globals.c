/* The program's global and static variables: the accesses the plugin's
   instrumentation counted in their shadow (its globals=1 default), read at
   every dump for the side file (extraformat.h, version 2), and cleared by
   memprof_reset.

   Which memory: the main program's PT_LOAD segments that are not
   executable (.data, .bss, .data.rel.ro, .got; .rodata in the read-only
   data segment that ld's -z separate-code, the default on x86-64, makes),
   found with dl_iterate_phdr as profile.c finds the executable ones.
   Shared libraries are not scanned.

   Cost.  The shadow of a large .bss is mostly pages that no counter in
   them ever reached: the shadow is MAP_NORESERVE, so such a page is not
   even mapped.  Segments whose shadow is larger than SCAN_DIRECT_MAX ask
   mincore which shadow pages are resident and read only those (reading
   the others would fault each in, as the zero page); smaller ones are read
   directly.  A shadow page that is swapped out when the dump is taken is
   read as zeros by the mincore path (mincore reports it absent): counts
   of globals whose shadow the kernel swapped out are lost, which only
   happens to counters not touched for a long time under memory
   pressure.  */

#define _GNU_SOURCE
#include "internal.h"

#include <elf.h>
#include <link.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

/* At most this many segments of the main program (a program has 2 or
   3).  */
#define GLOBAL_SEGMENTS_MAX 16
/* Shadow ranges up to this many bytes are read without mincore: 64 KiB
   of shadow is 512 KiB of data.  */
#define SCAN_DIRECT_MAX (64UL * 1024)
/* Shadow pages asked about per mincore call (the vector is static: dumps
   are serialized by profile.c's lock).  */
#define MINCORE_PAGES 4096
#define SHADOW_PAGE_SIZE 4096UL

/* Segments of the main program scanned (a program has 2 or 3).  */
struct data_segments
{
  struct address_range segments[GLOBAL_SEGMENTS_MAX];
  size_t count;
  uintptr_t bias; /* the program's load bias (dlpi_addr) */
};

static unsigned char resident[MINCORE_PAGES];

struct segment_search
{
  struct address_range *ranges;
  size_t count, max;
  bool all_objects, seen_program;
  uintptr_t bias;
};

/* The first object dl_iterate_phdr reports is the main program.  */
static int
collect_data_segments (struct dl_phdr_info *info, size_t size, void *cookie)
{
  struct segment_search *search = cookie;
  (void) size;
  if (!search->seen_program)
    search->bias = info->dlpi_addr, search->seen_program = true;
  for (int i = 0; i < info->dlpi_phnum; i++)
    {
      const ElfW (Phdr) *phdr = &info->dlpi_phdr[i];
      if (phdr->p_type != PT_LOAD || (phdr->p_flags & PF_X)
          || phdr->p_memsz == 0 || search->count == search->max)
        continue;
      search->ranges[search->count].start = info->dlpi_addr + phdr->p_vaddr;
      search->ranges[search->count].end
          = info->dlpi_addr + phdr->p_vaddr + phdr->p_memsz;
      search->count++;
    }
  return search->all_objects ? 0 : 1;
}

size_t
find_data_segments (struct address_range *ranges, size_t max, bool all_objects,
                    uintptr_t *bias)
{
  struct segment_search search = { ranges, 0, max, all_objects, false, 0 };
  dl_iterate_phdr (collect_data_segments, &search);
  if (bias != NULL)
    *bias = search.bias;
  return search.count;
}

/* The main program's segments never move: they are found once, at
   start-up (globals_start), and kept.  The fork child's handler clears
   their counters from this copy; it must not walk the loaded objects
   itself, since dl_iterate_phdr's lock may have been held by a thread of
   the parent at the fork (an exception being thrown), and that thread
   does not exist in the child to release it: glibc 2.36 does not reset
   that lock before the child's fork handlers run.  */
static struct data_segments program_segments;
/* 0: not found yet; 1: being stored by one thread; 2: stored.  */
static _Atomic int program_segments_state;

static void
find_program_segments (struct data_segments *list)
{
  int expected = 0;
  if (atomic_load_explicit (&program_segments_state, memory_order_acquire) == 2)
    {
      *list = program_segments;
      return;
    }
  list->count = find_data_segments (list->segments, GLOBAL_SEGMENTS_MAX, false,
                                    &list->bias);
  if (atomic_compare_exchange_strong (&program_segments_state, &expected, 1))
    {
      program_segments = *list;
      atomic_store_explicit (&program_segments_state, 2, memory_order_release);
    }
}

void
globals_start (void)
{
  struct data_segments list;
  find_program_segments (&list);
}

/* The accesses of the granule at GRANULE (64-byte aligned): its 8-byte
   counter, or in histogram mode the sum of its eight 1-byte counters,
   which sit at the same 8 bytes of shadow.  */
static uint64_t
granule_accesses (uintptr_t granule)
{
  if (runtime_histogram)
    {
      const uint8_t *counters
          = memprof_histogram_shadow_for (__memprof_shadow_base, granule);
      uint64_t sum = 0;
      for (unsigned i = 0;
           i < MEMPROF_GRANULE_SIZE / MEMPROF_HISTOGRAM_GRANULE_SIZE; i++)
        sum += counters[i];
      return sum;
    }
  return *memprof_shadow_for (__memprof_shadow_base, granule);
}

struct scan
{
  struct memprof_extra_global *out;
  size_t count, capacity;
  uintptr_t bias;
};

/* Record the granules of [FIRST, END) (64-byte aligned) that were
   accessed.  Their shadow is mapped.  */
static void
scan_granules (struct scan *scan, uintptr_t first, uintptr_t end)
{
  for (uintptr_t granule = first; granule < end;
       granule += MEMPROF_GRANULE_SIZE)
    {
      /* Whole zero counters are the rule: test them 8 bytes at a time
         (the same 8 bytes in both modes).  */
      if (*memprof_shadow_for (__memprof_shadow_base, granule) == 0)
        continue;
      if (scan->count == scan->capacity)
        return;
      scan->out[scan->count].address = granule - scan->bias;
      scan->out[scan->count].accesses = granule_accesses (granule);
      scan->count++;
    }
}

/* The granules of memory [FIRST, END) whose shadow is mapped.  */
static void
scan_resident (struct scan *scan, uintptr_t first, uintptr_t end)
{
  /* Shadow bytes per page of shadow: 4096 bytes of shadow are the
     counters of 32 KiB of memory.  */
  const uintptr_t memory_per_page = SHADOW_PAGE_SIZE << MEMPROF_SHADOW_SCALE;
  uintptr_t shadow_first
      = (uintptr_t) memprof_shadow_for (__memprof_shadow_base, first)
        & ~(SHADOW_PAGE_SIZE - 1);
  uintptr_t shadow_end = ROUND_UP (
      (uintptr_t) memprof_shadow_for (__memprof_shadow_base, end - 1)
          + MEMPROF_COUNTER_SIZE,
      SHADOW_PAGE_SIZE);
  /* The memory whose counters are the first byte of shadow_first.  */
  uintptr_t memory = (shadow_first - __memprof_shadow_base)
                     << MEMPROF_SHADOW_SCALE;

  for (uintptr_t page = shadow_first; page < shadow_end;)
    {
      size_t pages = (shadow_end - page) / SHADOW_PAGE_SIZE;
      if (pages > MINCORE_PAGES)
        pages = MINCORE_PAGES;
      bool known
          = mincore ((void *) page, pages * SHADOW_PAGE_SIZE, resident) == 0;
      for (size_t i = 0; i < pages; i++)
        {
          uintptr_t low = memory + i * memory_per_page;
          uintptr_t high = low + memory_per_page;
          if (known && !(resident[i] & 1))
            continue;
          scan_granules (scan, low < first ? first : low,
                         high > end ? end : high);
        }
      page += pages * SHADOW_PAGE_SIZE;
      memory += pages * memory_per_page;
    }
}

size_t
globals_capacity (void)
{
  struct data_segments list;
  size_t granules = 0;
  find_program_segments (&list);
  for (size_t i = 0; i < list.count; i++)
    granules += (ROUND_UP (list.segments[i].end, MEMPROF_GRANULE_SIZE)
                 - (list.segments[i].start & MEMPROF_GRANULE_MASK))
                / MEMPROF_GRANULE_SIZE;
  return granules;
}

size_t
globals_collect (struct memprof_extra_global *out, size_t capacity)
{
  struct data_segments list;
  struct scan scan = { out, 0, capacity, 0 };

  if (__memprof_shadow_base == 0 || capacity == 0)
    return 0;
  find_program_segments (&list);
  scan.bias = list.bias;
  for (size_t i = 0; i < list.count; i++)
    {
      uintptr_t first = list.segments[i].start & MEMPROF_GRANULE_MASK;
      uintptr_t end = ROUND_UP (list.segments[i].end, MEMPROF_GRANULE_SIZE);
      if ((end - first) >> MEMPROF_SHADOW_SCALE <= SCAN_DIRECT_MAX)
        scan_granules (&scan, first, end);
      else
        scan_resident (&scan, first, end);
    }
  return scan.count;
}

static void
clear_segments (const struct data_segments *list)
{
  for (size_t i = 0; i < list->count; i++)
    {
      uintptr_t first = list->segments[i].start & MEMPROF_GRANULE_MASK;
      uintptr_t end = ROUND_UP (list->segments[i].end, MEMPROF_GRANULE_SIZE);
      shadow_clear (first, (end - first) / MEMPROF_GRANULE_SIZE);
    }
}

void
globals_reset (void)
{
  struct data_segments list;

  if (__memprof_shadow_base == 0)
    return;
  find_program_segments (&list);
  clear_segments (&list);
}

void
globals_fork_child (void)
{
  /* Only the segments found before the fork: no dl_iterate_phdr.  */
  if (__memprof_shadow_base != 0
      && atomic_load_explicit (&program_segments_state, memory_order_acquire)
             == 2)
    clear_segments (&program_segments);
}
