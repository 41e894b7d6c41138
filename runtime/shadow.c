/* Shadow memory: reserved once at start-up, one counter per granule of
   the whole user address space (see memprof/abi.h).  Pages are committed
   by the kernel only when a counter in them is first touched.  */

#include "internal.h"

#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

/* x86-64 user space is below 2^47; the shadow covers all of it.  */
#define USER_ADDRESS_BITS 47
#define SHADOW_SIZE ((1UL << USER_ADDRESS_BITS) >> MEMPROF_SHADOW_SCALE)
/* Clearing more shadow than this gives the pages back instead of
   writing zeros (LLVM's clear_shadow_mmap_threshold).  */
#define SHADOW_RELEASE_THRESHOLD (64UL * 1024)
#define PAGE_SIZE_BYTES 4096UL
/* Histogram entries kept per allocation: blocks larger than this many
   8-byte words get a histogram of their first part only.  */
#define HISTOGRAM_MAX_ENTRIES (64U * 1024)

MEMPROF_EXPORT uintptr_t __memprof_shadow_base;

/* ---- The shadow before any instrumented code runs ----

   Instrumented code reads __memprof_shadow_base without testing it, and
   some of it runs before any constructor: IFUNC resolvers (IRELATIVE
   relocations, applied while the dynamic linker relocates their module)
   and the functions they call, .preinit_array functions.  glibc relocates
   a module's dependencies before the module (elf/rtld.c walks l_initfini
   backwards) and applies a module's IRELATIVE relocations after its
   other relocations (elf/do-rel.h).  So the IFUNC below, whose resolver
   reserves the shadow by raw system calls, runs while libmemprof.so is
   relocated: before any relocation of the program or of a library that
   needs libmemprof.so.  Nothing of the C library is called (its PLT
   entries may not be bound yet; errno is not needed).  The base goes to
   both copies of the variable: through the GOT (the program's copy when
   a non-PIE program has a copy relocation for it, which the program's
   relocation fills later from this library's own copy) and to the
   library's own copy (the alias).  docs/plugin.md, "Code that runs
   before start-up", says what this does not cover.  */

extern uintptr_t shadow_base_own_copy
    __attribute__ ((alias ("__memprof_shadow_base"), visibility ("hidden")));

__attribute__ ((no_stack_protector)) static long
raw_syscall6 (long number, long a1, long a2, long a3, long a4, long a5, long a6)
{
  long result;
  register long r10 __asm__("r10") = a4;
  register long r8 __asm__("r8") = a5;
  register long r9 __asm__("r9") = a6;
  __asm__ volatile("syscall"
                   : "=a"(result)
                   : "0"(number), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8),
                     "r"(r9)
                   : "rcx", "r11", "memory");
  return result;
}

__attribute__ ((no_stack_protector)) int
shadow_reserve_by_syscalls (void)
{
  long shadow;

  if (__memprof_shadow_base != 0)
    return 0;
  shadow
      = raw_syscall6 (SYS_mmap, 0, (long) SHADOW_SIZE, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  /* A failure is -errno.  */
  if (shadow < 0 && shadow > -4096)
    return (int) -shadow;
  /* Huge pages would commit 2 MiB at a time for scattered counters.  */
  raw_syscall6 (SYS_madvise, shadow, (long) SHADOW_SIZE, MADV_NOHUGEPAGE, 0, 0,
                0);
  __memprof_shadow_base = (uintptr_t) shadow;
  shadow_base_own_copy = (uintptr_t) shadow;
  return 0;
}

static void
shadow_reserved_early (void)
{
}

__attribute__ ((no_stack_protector,
                used)) static void (*shadow_reserve_early (void)) (void)
{
  shadow_reserve_by_syscalls ();
  return shadow_reserved_early;
}

static void shadow_early_ifunc (void)
    __attribute__ ((ifunc ("shadow_reserve_early")));

/* The reference that makes the linker emit the IRELATIVE relocation.  */
__attribute__ ((used)) static void (*volatile const shadow_early_reference) (
    void)
    = shadow_early_ifunc;

bool
shadow_reserve (void)
{
  /* Reserved while libmemprof.so was relocated, or now; an early failure
     (the resolver cannot log) is tried again here and said.  */
  int error = shadow_reserve_by_syscalls ();
  if (error != 0)
    {
      log_printf ("cannot reserve %lu GiB of address space for the shadow: "
                  "%s; running without access counts (allocations are still "
                  "recorded; code instrumented with inline counters cannot "
                  "run without the shadow)",
                  SHADOW_SIZE >> 30, strerror (error));
      return false;
    }
  return true;
}

uint32_t
histogram_entries_for (uint64_t size)
{
  uint64_t entries = (size + MEMPROF_HISTOGRAM_GRANULE_SIZE - 1)
                     / MEMPROF_HISTOGRAM_GRANULE_SIZE;
  return entries > HISTOGRAM_MAX_ENTRIES ? HISTOGRAM_MAX_ENTRIES
                                         : (uint32_t) entries;
}

/* Zero LENGTH bytes of shadow at START, giving whole pages back to the
   kernel when the range is large.  */
static void
clear_shadow_bytes (uintptr_t start, size_t length)
{
  if (length >= SHADOW_RELEASE_THRESHOLD)
    {
      uintptr_t first_page = ROUND_UP (start, PAGE_SIZE_BYTES);
      uintptr_t last_page = (start + length) & ~(PAGE_SIZE_BYTES - 1);
      memset ((void *) start, 0, first_page - start);
      madvise ((void *) first_page, last_page - first_page, MADV_DONTNEED);
      memset ((void *) last_page, 0, start + length - last_page);
      return;
    }
  memset ((void *) start, 0, length);
}

/* The most counters cleared by plain stores rather than memset: the
   runtime's own memset is the interceptor (interceptors.c), a call and
   its checks before the C library's.  */
#define CLEAR_INLINE_COUNTERS 8

/* Zero COUNT counters at COUNTERS by stores (the empty asm keeps GCC
   from turning the loop back into a memset call).  */
static inline void
clear_counters (uint64_t *counters, size_t count)
{
  for (size_t i = 0; i < count; i++)
    {
      counters[i] = 0;
      __asm__("" : : "r"(counters) : "memory");
    }
}

void
shadow_clear (uintptr_t block, size_t granules)
{
  if (__memprof_shadow_base == 0)
    return;
  if (!runtime_histogram && granules <= CLEAR_INLINE_COUNTERS)
    clear_counters (memprof_shadow_for (__memprof_shadow_base, block),
                    granules);
  else if (runtime_histogram)
    clear_shadow_bytes (
        (uintptr_t) memprof_histogram_shadow_for (__memprof_shadow_base, block),
        granules * (MEMPROF_GRANULE_SIZE / MEMPROF_HISTOGRAM_GRANULE_SIZE));
  else
    clear_shadow_bytes (
        (uintptr_t) memprof_shadow_for (__memprof_shadow_base, block),
        granules * MEMPROF_COUNTER_SIZE);
}

/* The sum of COUNT counters at COUNTERS, and in *TOUCHED how many are
   not 0: four at a time, in independent chains (a block of 64 granules
   was a 64-step chain of dependent adds).  */
static inline uint64_t
sum_counters (const uint64_t *counters, size_t count, uint64_t *touched)
{
  uint64_t sum0 = 0, sum1 = 0, sum2 = 0, sum3 = 0;
  uint64_t nonzero0 = 0, nonzero1 = 0, nonzero2 = 0, nonzero3 = 0;
  size_t i = 0;

  for (; i + 4 <= count; i += 4)
    {
      sum0 += counters[i];
      sum1 += counters[i + 1];
      sum2 += counters[i + 2];
      sum3 += counters[i + 3];
      nonzero0 += counters[i] != 0;
      nonzero1 += counters[i + 1] != 0;
      nonzero2 += counters[i + 2] != 0;
      nonzero3 += counters[i + 3] != 0;
    }
  for (; i < count; i++)
    {
      sum0 += counters[i];
      nonzero0 += counters[i] != 0;
    }
  *touched = nonzero0 + nonzero1 + nonzero2 + nonzero3;
  return sum0 + sum1 + sum2 + sum3;
}

uint64_t
shadow_collect (uintptr_t block, size_t granules, bool clear,
                uint64_t *touched_counters, uint64_t *histogram,
                uint32_t histogram_size)
{
  uint64_t total = 0, touched = 0;

  *touched_counters = 0;
  if (__memprof_shadow_base == 0)
    return 0;
  if (runtime_histogram)
    {
      const uint8_t *counters
          = memprof_histogram_shadow_for (__memprof_shadow_base, block);
      size_t count
          = granules * (MEMPROF_GRANULE_SIZE / MEMPROF_HISTOGRAM_GRANULE_SIZE);
      for (size_t i = 0; i < count; i++)
        {
          total += counters[i];
          touched += counters[i] != 0;
          if (i < histogram_size)
            histogram[i] = counters[i];
        }
    }
  else
    {
      uint64_t *counters = memprof_shadow_for (__memprof_shadow_base, block);
      total = sum_counters (counters, granules, &touched);
      /* Counters all 0 need no clearing (most blocks of code the plugin
         did not build).  */
      if (touched == 0)
        clear = false;
      /* A small block's counters are zeroed here, in the lines just
         read.  */
      if (clear && granules <= CLEAR_INLINE_COUNTERS)
        {
          clear_counters (counters, granules);
          clear = false;
        }
    }
  if (clear)
    shadow_clear (block, granules);
  *touched_counters = touched;
  return total;
}

/* ---- Entry points for instrumented code (callback mode, ranges) ---- */

static inline void
count_access (uintptr_t addr, uint64_t times)
{
  if (runtime_histogram)
    {
      uint8_t *counter
          = memprof_histogram_shadow_for (__memprof_shadow_base, addr);
      uint64_t value = *counter + times;
      *counter = value > MEMPROF_HISTOGRAM_MAX ? MEMPROF_HISTOGRAM_MAX
                                               : (uint8_t) value;
    }
  else
    *memprof_shadow_for (__memprof_shadow_base, addr) += times;
}

/* access_sample_rate: the accesses this thread lets pass before it counts
   the next one (callback mode).  */
static __thread long accesses_until_sample
    __attribute__ ((tls_model ("initial-exec")));

/* How many accesses the hook being run counts: 1, or with
   access_sample_rate=N, 0 for N-1 calls in N and N for the other.  */
static inline uint64_t
sampled_accesses (void)
{
  long rate = runtime_options.access_sample_rate;
  if (LIKELY (rate <= 1))
    return 1;
  if (accesses_until_sample > 0)
    {
      accesses_until_sample--;
      return 0;
    }
  accesses_until_sample = rate - 1;
  return (uint64_t) rate;
}

static inline void
hook (const void *addr, bool histogram)
{
  uint64_t times = sampled_accesses ();
  if (times == 0 || UNLIKELY (__memprof_shadow_base == 0))
    return;
  if (histogram)
    count_access ((uintptr_t) addr, times);
  else
    *memprof_shadow_for (__memprof_shadow_base, (uintptr_t) addr) += times;
  if (UNLIKELY (stats_enabled))
    stats_classify ((uintptr_t) addr, times);
}

MEMPROF_EXPORT void
__memprof_load (const void *addr)
{
  hook (addr, false);
}

MEMPROF_EXPORT void
__memprof_store (const void *addr)
{
  hook (addr, false);
}

MEMPROF_EXPORT void
__memprof_histogram_load (const void *addr)
{
  hook (addr, true);
}

MEMPROF_EXPORT void
__memprof_histogram_store (const void *addr)
{
  hook (addr, true);
}

/* One count per 8 bytes: the steps addr, addr+8, ... below addr+size, each
   counted at the granule (or histogram byte) it falls in.  */
MEMPROF_EXPORT void
__memprof_range_access (const void *addr, size_t size)
{
  __memprof_range_access_weighted (addr, size, 1);
}

/* The same, each step counted WEIGHT times: the ranges of sampled counting
   code (access_bursts.c).  */
MEMPROF_EXPORT void
__memprof_range_access_weighted (const void *addr, size_t size,
                                 unsigned long weight)
{
  uintptr_t step = (uintptr_t) addr;
  uintptr_t end = step + size;

  if (__memprof_shadow_base == 0 || end < step)
    return;
  if (UNLIKELY (stats_enabled))
    stats_classify_range (
        step, weight * ((size + MEMPROF_RANGE_STEP - 1) / MEMPROF_RANGE_STEP));
  if (runtime_histogram)
    {
      for (; step < end; step += MEMPROF_RANGE_STEP)
        count_access (step, weight);
      return;
    }
  while (step < end)
    {
      uintptr_t granule_end
          = (step & MEMPROF_GRANULE_MASK) + MEMPROF_GRANULE_SIZE;
      uintptr_t limit = granule_end < end ? granule_end : end;
      uint64_t steps
          = (limit - step + MEMPROF_RANGE_STEP - 1) / MEMPROF_RANGE_STEP;
      count_access (step, steps * weight);
      step += steps * MEMPROF_RANGE_STEP;
    }
}
