/* The contract between code instrumented by gcc-plugin/memprof.so and the
   libmemprof runtime.  Both sides include this header; change it only
   together with MEMPROF_ABI_VERSION.

   Default mode: one 8-byte counter per 64-byte granule of application
   memory, at

       shadow_for(addr) = __memprof_shadow_base + ((addr & ~63) >> 3)

   which is LLVM MemProf's mapping, so a count means the same in both
   toolchains.  Instrumented code loads __memprof_shadow_base, computes the
   counter address and increments it inline: one increment per access, at
   the granule of the access's first byte.

   Histogram mode: one 1-byte saturating counter per 8-byte granule, at

       histogram_shadow_for(addr) = __memprof_shadow_base + (addr >> 3)

   giving LLVM raw v4's AccessHistogram (per-8-byte counts of a block).

   Range accesses (memcpy, memmove, memset and their builtins) call
   __memprof_range_access (addr, size): one count per 8 bytes of the range,
   each at the granule that 8-byte step starts in (LLVM's rule).  */

#ifndef MEMPROF_ABI_H
#define MEMPROF_ABI_H

#include <stddef.h>
#include <stdint.h>

/* Bumped whenever anything below changes meaning.  Instrumented modules
   call __memprof_init with the version they were built for and their
   mode.  Version 2 added the mode argument.  */
#define MEMPROF_ABI_VERSION 2

/* The mode of an instrumented module, as bits of __memprof_init's second
   argument: which shadow layout its inline code writes (histogram or
   counter) and whether it counts through the hooks (callbacks).  The
   runtime follows the modules' layout, or refuses a mix in one line.  */
#define MEMPROF_MODE_HISTOGRAM 1u
#define MEMPROF_MODE_CALLBACKS 2u

/* Default mode: 64-byte granule, 8-byte counter.  */
#define MEMPROF_GRANULE_SHIFT 6
#define MEMPROF_GRANULE_SIZE (1UL << MEMPROF_GRANULE_SHIFT)
#define MEMPROF_GRANULE_MASK (~(uintptr_t) (MEMPROF_GRANULE_SIZE - 1))
#define MEMPROF_COUNTER_SIZE 8
/* (addr & MASK) >> SCALE: the 64 bytes of a granule map to 8 shadow bytes. */
#define MEMPROF_SHADOW_SCALE 3

/* Histogram mode: 8-byte granule, 1-byte counter saturating at 255.  */
#define MEMPROF_HISTOGRAM_GRANULE_SIZE 8
#define MEMPROF_HISTOGRAM_SCALE 3
#define MEMPROF_HISTOGRAM_MAX 255

/* A range access counts once per this many bytes.  */
#define MEMPROF_RANGE_STEP 8

/* The symbols instrumented code refers to.  */
#define MEMPROF_SHADOW_BASE_NAME "__memprof_shadow_base"
#define MEMPROF_RANGE_ACCESS_NAME "__memprof_range_access"
#define MEMPROF_LOAD_NAME "__memprof_load"
#define MEMPROF_STORE_NAME "__memprof_store"
#define MEMPROF_HISTOGRAM_LOAD_NAME "__memprof_histogram_load"
#define MEMPROF_HISTOGRAM_STORE_NAME "__memprof_histogram_store"
#define MEMPROF_INIT_NAME "__memprof_init"
/* A weak byte each unit compiled with -flto and the plugin defines: the
   runtime finds it in a program none of whose modules called
   __memprof_init, which was then linked without -fplugin=memprof.so.  */
#define MEMPROF_LTO_UNIT_NAME "__memprof_lto_unit"
/* Sampled access counting (-fplugin-arg-memprof-sample-accesses): the
   thread's countdown of checks (function entries, loop back edges), an
   initial-exec TLS variable of the runtime that runs down through a gap
   (BURST + GAP - 1 down to BURST) and a burst (BURST - 1 down to 0), and
   the switch that a check calls when the countdown is out of its copy's
   range: it returns nonzero in a burst, and at -1 starts the next period.
   Ranges of the counting code add WEIGHT for each step.  */
/* Direct allocation calls (-fplugin-arg-memprof-direct-allocations,
   gcc-plugin/direct_allocations.cc): the compiled code decides at each
   call site whether sampling leaves an allocation out, from the site's
   own byte (the runtime set it: the census has seen the site and nobody
   but the profile watches) and the thread's countdown of bytes to the
   next sample (the first 8 bytes of the TLS variable
   MEMPROF_SAMPLING_COUNTDOWN_NAME, MEMPROF_SAMPLING_THREAD_SIZE bytes in
   all, which an executable defines weak), decreased by max (size, 1);
   then it calls glibc's __libc_* directly.  Any other case calls the
   runtime's entry with the site's byte.  free and operator delete hand
   NULL, or a block without MEMPROF_HEADER_TAG in the word before it (a
   glibc chunk's size field never has it; the runtime's header always
   has), to __libc_free when
   their site's byte is set (sampling on, nobody watches frees, no slots
   of the runtime's own).  A free site's byte is the first of a word of
   its own, zero but for that byte, which the check reads for NULL in
   place of the word before the block.  The runtime clears the bytes it
   set when what they said stops being true.  */
#define MEMPROF_SAMPLING_COUNTDOWN_NAME "__memprof_sampling_countdown"
#define MEMPROF_SAMPLING_THREAD_SIZE 2056
#define MEMPROF_HEADER_TAG 8U
#define MEMPROF_DIRECT_MALLOC_NAME "__memprof_direct_malloc"
#define MEMPROF_DIRECT_CALLOC_NAME "__memprof_direct_calloc"
#define MEMPROF_DIRECT_REALLOC_NAME "__memprof_direct_realloc"
#define MEMPROF_DIRECT_FREE_NAME "__memprof_direct_free"
#define MEMPROF_DIRECT_DELETE_NAME "__memprof_direct_delete"
#define MEMPROF_DIRECT_DELETE_SIZED_NAME "__memprof_direct_delete_sized"
#define MEMPROF_ACCESS_COUNTDOWN_NAME "__memprof_access_countdown"
#define MEMPROF_ACCESS_SWITCH_NAME "__memprof_access_switch"
/* The same switch for the checks of copied functions (x86-64): called
   from an asm statement, below the red zone, it keeps every register but
   %rax (its result) and the flags, so that a check's cold path does not
   make a leaf a caller (callee-saved registers, a prologue).  */
#define MEMPROF_ACCESS_SWITCH_PRESERVING_NAME                                  \
  "__memprof_access_switch_preserving"
#define MEMPROF_RANGE_ACCESS_WEIGHTED_NAME "__memprof_range_access_weighted"
/* A loop's strided access, counted at the loop's exits (combine.cc).  */
#define MEMPROF_STRIDED_ACCESS_NAME "__memprof_strided_access"
/* memcmp called from instrumented code, where the call stays a call of
   the C library's (gcc-plugin/library_calls.cc): the same result, and
   the bytes compared counted as the interposed memcmp counts them.  Its
   last argument is memcmp's address as the calling module binds it: a
   program's own memcmp is called instead, nothing counted.  */
#define MEMPROF_MEMCMP_NAME "__memprof_memcmp"
/* The same for strlen, strcmp and strncmp.  */
#define MEMPROF_STRLEN_NAME "__memprof_strlen"
#define MEMPROF_STRCMP_NAME "__memprof_strcmp"
#define MEMPROF_STRNCMP_NAME "__memprof_strncmp"

#ifdef __cplusplus
extern "C" {
#endif

/* Set by the runtime before any constructor of the profiled program runs;
   never changes afterwards.  */
extern uintptr_t __memprof_shadow_base;

/* Idempotent; instrumented modules call it from their constructor with
   MEMPROF_ABI_VERSION and their MEMPROF_MODE_ bits.  A version mismatch
   is reported once on stderr; so is a mode the runtime cannot follow.  */
void __memprof_init (unsigned abi_version, unsigned mode);

/* Callback mode: the same counts as the inline code, through a call.  */
void __memprof_load (const void *addr);
void __memprof_store (const void *addr);
void __memprof_histogram_load (const void *addr);
void __memprof_histogram_store (const void *addr);
void __memprof_range_access (const void *addr, size_t size);

/* Sampled access counting (see above).  */
extern __thread long __memprof_access_countdown;
int __memprof_access_switch (long burst, long gap);
void __memprof_range_access_weighted (const void *addr, size_t size,
                                      unsigned long weight);
/* EXECUTIONS runs of one access, the Jth at FIRST + J * STEP, each counted
   WEIGHT times (runtime/strided.c).  */
void __memprof_strided_access (const void *first, long step,
                               unsigned long executions, unsigned long weight);
int __memprof_memcmp (const void *a, const void *b, size_t size,
                      int (*program_memcmp) (const void *, const void *,
                                             size_t));
size_t __memprof_strlen (const char *text,
                         size_t (*program_strlen) (const char *));
int __memprof_strcmp (const char *a, const char *b,
                      int (*program_strcmp) (const char *, const char *));
int __memprof_strncmp (const char *a, const char *b, size_t limit,
                       int (*program_strncmp) (const char *, const char *,
                                               size_t));

#ifdef __cplusplus
}
#endif

/* The counter for ADDR, given the shadow base.  */
static inline uint64_t *
memprof_shadow_for (uintptr_t shadow_base, uintptr_t addr)
{
  return (
      uint64_t *) (shadow_base
                   + ((addr & MEMPROF_GRANULE_MASK) >> MEMPROF_SHADOW_SCALE));
}

/* The histogram counter for ADDR, given the shadow base.  */
static inline uint8_t *
memprof_histogram_shadow_for (uintptr_t shadow_base, uintptr_t addr)
{
  return (uint8_t *) (shadow_base + (addr >> MEMPROF_HISTOGRAM_SCALE));
}

#endif /* MEMPROF_ABI_H */
