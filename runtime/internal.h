/* Declarations shared by the runtime's files.  Nothing here is visible
   outside libmemprof: the library is built with -fvisibility=hidden and
   only MEMPROF_EXPORT symbols are exported.

   The rule of the runtime: no path that runs inside malloc allocates
   through the interposed functions.  Memory of its own comes from mmap
   (runtime_map); the thread-local guard in_runtime sends any allocation
   made while the runtime is working straight to glibc, unprofiled.  */

#ifndef MEMPROF_INTERNAL_H
#define MEMPROF_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/rseq.h>

#include "memprof/abi.h"
#include "extraformat.h"
#include "mib.h"
#include "options.h"

#define MEMPROF_EXPORT __attribute__ ((visibility ("default")))
#define LIKELY(x) __builtin_expect (!!(x), 1)
#define UNLIKELY(x) __builtin_expect (!!(x), 0)
#define ROUND_UP(x, a) (((x) + (a) -1) & ~((uintptr_t) (a) -1))

/* ---- Process state (runtime.c) ---- */

enum runtime_state
{
  RUNTIME_UNINITIALIZED,
  RUNTIME_INITIALIZING,
  RUNTIME_RUNNING, /* allocations are recorded */
  RUNTIME_FINISHED /* the exit profile is written; nothing more is recorded */
};

extern _Atomic int runtime_state;
extern struct memprof_options runtime_options;
/* Set at start-up, and by the first instrumented module (modes.c).  */
extern bool runtime_histogram;

/* Set while this thread is inside the runtime; allocations made then are
   passed to glibc without being recorded.  */
extern __thread int in_runtime __attribute__ ((tls_model ("initial-exec")));

/* Start the runtime unless it runs, or is starting in this thread, or it
   is too early.  */
void runtime_ensure_initialized (void);
/* Too early to start the runtime: this thread's thread-local storage is
   not set up yet (an IFUNC resolver run while the program is relocated);
   an allocation made then is left unrecorded and counted in
   runtime_allocations_too_early.  */
bool runtime_too_early (void);
extern _Atomic uint64_t runtime_allocations_too_early;
/* interceptors.c (the shared runtime only; NULL in the static one):
   look at the modules loaded since the last call, for the instrumented
   ones.  */
void interceptors_note_modules (void) __attribute__ ((weak));
/* Something may count from now on: look again at the next calls.  */
void interceptors_recheck (void) __attribute__ ((weak));
uint32_t runtime_now_ms (void);

/* ---- Segments of the modules (profile.c, modules.c) ---- */

/* The most executable segments a profile lists.  */
#define SEGMENTS_MAX 1024

struct memprof_raw_segment;

/* The executable segments of the loaded modules, at most MAX of them,
   into SEGMENTS; returns how many.  */
size_t segments_collect (struct memprof_raw_segment *segments, size_t max);

/* Append to SEGMENTS (COUNT of them, room for MAX) the kept segments of
   modules dlclose'd since, that no loaded segment covers.  */
void modules_add_unloaded (struct memprof_raw_segment *segments, size_t *count,
                           size_t max);

/* The module loaded with bias BIAS over [LOW, HIGH) was unloaded
   (modules.c, at dlclose): forget what was learnt about its code
   addresses, which a module loaded later may reuse.  The interceptors'
   list of instrumented modules (the shared runtime only: weak) and the
   stack capture's frame facts.  */
void interceptors_forget_module (uintptr_t bias, uint64_t name_hash,
                                 uintptr_t low, uintptr_t high)
    __attribute__ ((weak));
/* With its bias, what tells a module from another mapped at its address
   (modules.c): a hash of its name (dlpi_name).  */
uint64_t module_name_hash (const char *name);
void stack_forget_code (uintptr_t low, uintptr_t high);
/* Bumped by stack_forget_code: another module may now be mapped where
   forgotten code was, with the same return addresses in other functions,
   so the fold of a stack by its return addresses (fold_recursion) may
   differ from what was learnt before.  The threads' context caches are
   dropped when it changes (context_cache.c).  */
extern _Atomic uint32_t code_forgotten;
/* stack_forget_code: the fold memo (fold_memo.c), whose steps are keyed
   by return address and fold by the functions found there when they were
   made, is not used again (stacks are folded and interned each time).  */
void fold_memo_forget (void);
/* fork: no writer of the interceptors' code ranges (weak, as above) nor
   of the kept segments is half way in the child: their locks are taken
   first and released last (the child's generation even, lock free).  */
void interceptors_fork_prepare (void) __attribute__ ((weak));
void interceptors_fork_release (void) __attribute__ ((weak));
void modules_fork_prepare (void);
void modules_fork_release (void);
/* fork: a thread was inside dl_iterate_phdr when the process forked
   (loader_walk.c, libmemprof.so only: weak, absent from libmemprof.a).
   In such a child the loader's lock stays held for ever, and
   runtime_loader_lost (control.c) is set: it captures stacks by frame
   pointers only and writes no profile (both would walk the loaded
   objects).  */
bool loader_walk_in_progress (void) __attribute__ ((weak));
extern bool runtime_loader_lost;

/* Once, at the first profile written (with its SEGMENTS, COUNT of them):
   one line when llvm-profdata cannot symbolize this program's profiles
   (linkcheck.c).  */
void link_check (const struct memprof_raw_segment *segments, size_t count);

/* ---- The modules' mode (modes.c) ---- */

/* At start-up: note which options MEMPROF_OPTIONS (OPTIONS_TEXT) set.  */
void modes_start (const char *options_text);

/* An instrumented module's __memprof_init: MODE is its MEMPROF_MODE_ bits,
   CALLER an address in it.  Follows or refuses it (modes.c).  */
void modes_register (unsigned mode, const void *caller);

/* At exit: one line when the program was compiled with -flto and the
   plugin but linked without it.  */
void modes_check_at_exit (void);
/* CLOCK_MONOTONIC in nanoseconds, through the TSC where it is safe
   (clock.c).  */
int64_t clock_now_ns (void);

/* The time stamp counter as this thread's last clock_now_ns read it, when
   the clock reads the TSC; else the TSC now.  So that the peak's
   bookkeeping (peak.c) needs no reading of its own next to the
   allocator's.  */
extern __thread uint64_t clock_last_tsc
    __attribute__ ((tls_model ("initial-exec")));
uint64_t clock_reading_tsc (void);

/* The CPU this thread runs on: the cpu_id the kernel keeps in the
   thread's rseq area (what glibc's sched_getcpu reads), without a call;
   sched_getcpu where there is none (runtime_current_cpu_slow).  */
uint32_t runtime_current_cpu_slow (void);
static inline uint32_t
runtime_current_cpu (void)
{
  if (__rseq_size != 0)
    {
      int32_t cpu
          = ((const volatile struct rseq *) ((char *)
                                                 __builtin_thread_pointer ()
                                             + __rseq_offset))
                ->cpu_id;
      if (cpu >= 0)
        return (uint32_t) cpu;
    }
  return runtime_current_cpu_slow ();
}

/* runtime_now_ms, clock_reading_tsc and runtime_current_cpu of one
   moment: the allocation path's reading (clock_stamp, inline in
   clock.h).  */
struct clock_stamp
{
  uint32_t ms, cpu;
  uint64_t tsc;
};
/* CLOCK_MONOTONIC's milliseconds at start-up (runtime.c sets it).  */
extern int64_t clock_start_ms;
/* A hold: until clock_hold_end, every clock_stamp of this thread returns
   the first one's reading while the thread has not been off its CPU
   since (rseq says so), so that realloc's allocation and free take one
   reading.  Only around the runtime's own work (no program code runs in
   a hold: not with hooks set), a copy of at most CLOCK_HOLD_COPY_MAX
   bytes; false (no hold) otherwise, and without rseq or with the
   ticker.  */
#define CLOCK_HOLD_COPY_MAX 65536
bool clock_hold_begin (size_t copy_bytes);
void clock_hold_end (void);
/* verbosity=2, at exit: one line, the readings holds saved.  */
void clock_report (void);

/* The ticker's time word (ticker.c), read by clock_now_ns.  */
#define TICKER_CHECK_EVERY 64 /* a power of two */
struct clock_ticker
{
  _Atomic bool valid;    /* the helper runs on time, readings are seen */
  _Atomic bool used;     /* a reading since the helper's last tick */
  _Atomic int32_t alive; /* the helper's id; 0 (by the kernel) when gone */
  _Atomic uint64_t now_ns, tsc;   /* only grow */
  _Atomic uint64_t rest_until_ns; /* the helper rests: readings exact */
} __attribute__ ((aligned (64)));
extern struct clock_ticker clock_ticker;
extern __thread uint32_t clock_ticker_reads
    __attribute__ ((tls_model ("initial-exec")));
/* CLOCK_MONOTONIC through the TSC or clock_gettime, never the ticker.  */
int64_t clock_exact_ns (void);
/* An exact reading that raises the ticker's word (and starts it); with
   SAMPLE, notes how far behind the word was.  */
int64_t clock_ticker_slow (bool sample);
void clock_ticker_fork_child (void);
/* One line on the log: the helpers' ticks, late ticks, CPU time.  */
void clock_ticker_report (void);

/* ---- Spin locks (short critical sections only) ---- */

typedef struct
{
  atomic_flag flag;
} spinlock_t;
#define SPINLOCK_INIT                                                          \
  {                                                                            \
    ATOMIC_FLAG_INIT                                                           \
  }

static inline void
spin_lock (spinlock_t *lock)
{
  while (atomic_flag_test_and_set_explicit (&lock->flag, memory_order_acquire))
    __builtin_ia32_pause ();
}

/* Take LOCK, giving up after ATTEMPTS tries; 0 waits as spin_lock does.
   For signal handlers, where the interrupted thread may hold it.  */
static inline bool
spin_lock_within (spinlock_t *lock, unsigned long attempts)
{
  for (unsigned long tried = 0;
       atomic_flag_test_and_set_explicit (&lock->flag, memory_order_acquire);
       tried++)
    {
      if (attempts != 0 && tried >= attempts)
        return false;
      __builtin_ia32_pause ();
    }
  return true;
}

static inline void
spin_unlock (spinlock_t *lock)
{
  atomic_flag_clear_explicit (&lock->flag, memory_order_release);
}

/* spin_lock for the allocation path: while the process has one thread
   (glibc's __libc_single_threaded, cleared for good by the first
   pthread_create), the flag is set by a plain store, without the locked
   instruction; a signal handler on this thread still finds it taken.
   Released by spin_unlock.  */
extern char __libc_single_threaded;
static inline void
spin_lock_hot (spinlock_t *lock)
{
  if (__libc_single_threaded)
    {
      __atomic_store_n ((unsigned char *) &lock->flag, 1, __ATOMIC_RELAXED);
      atomic_signal_fence (memory_order_seq_cst);
    }
  else
    spin_lock (lock);
}

/* spin_lock_hot's try: false when LOCK is taken.  */
static inline bool
spin_trylock_hot (spinlock_t *lock)
{
  if (__libc_single_threaded)
    {
      if (__atomic_load_n ((unsigned char *) &lock->flag, __ATOMIC_RELAXED))
        return false;
      __atomic_store_n ((unsigned char *) &lock->flag, 1, __ATOMIC_RELAXED);
      atomic_signal_fence (memory_order_seq_cst);
      return true;
    }
  return !atomic_flag_test_and_set_explicit (&lock->flag, memory_order_acquire);
}

/* ---- Entries while the thread is inside the runtime (allocator.c) ---- */

/* Set while this thread runs one of the runtime's sections that take its
   locks: the malloc family's paths that go beyond glibc's own call (from
   the entry point to its return, the trace and the events included), a
   profile's dump, fork's handlers.  A signal handler that interrupts
   such a section and calls the malloc family finds it set: its
   allocations are blocks of the runtime's reserve (emergency.c), never
   glibc's (the section may be inside glibc's allocator), unrecorded
   (runtime_allocations_reentered); its frees of reserve blocks are made
   at once, and of any other block (glibc's too) wait on
   runtime_deferred_frees, a list through the blocks' first words, until
   the section ends (entry_end) or the thread's next entry does.  The hooks run with it clear (they may allocate, and are
   profiled); so does an operator new's new-handler.  */
extern __thread bool runtime_entered
    __attribute__ ((tls_model ("initial-exec")));
extern __thread void *runtime_deferred_frees
    __attribute__ ((tls_model ("initial-exec")));
/* Allocations made inside a section by a handler that interrupted it
   (stats=1), and the frees deferred so.  */
extern _Atomic uint64_t runtime_allocations_reentered;
extern _Atomic uint64_t runtime_frees_deferred;
/* Free the blocks of runtime_deferred_frees (runtime_entered clear).  */
void runtime_free_deferred (void);
/* Free POINTER (not NULL, not glibc's alone) when the section the thread
   is in ends.  */
void runtime_defer_free (void *pointer);

/* Memory for the malloc family's calls made inside a section
   (emergency.c): SIZE bytes at a pointer aligned to ALIGNMENT (a power
   of two; 64 at least is given) with EMERGENCY_ROOM bytes before it for
   the caller (a block header), never from glibc's allocator, which the
   section may be inside.  Async-signal-safe and lock-free; NULL when
   there is no memory.  emergency_free gives such a block back, from any
   thread and context.  */
#define EMERGENCY_ROOM 48
void *emergency_allocate (size_t size, size_t alignment);
void emergency_free (void *pointer);

/* Enter a section: false when the thread is in one already (a handler
   interrupted it, or the runtime's own call), which the caller then
   serves without the runtime's locks.  */
static inline bool
entry_begin (void)
{
  if (UNLIKELY (runtime_entered))
    return false;
  runtime_entered = true;
  atomic_signal_fence (memory_order_seq_cst);
  return true;
}

/* Leave it, and free what a handler's frees left meanwhile.  */
static inline void
entry_end (void)
{
  atomic_signal_fence (memory_order_seq_cst);
  runtime_entered = false;
  atomic_signal_fence (memory_order_seq_cst);
  if (UNLIKELY (runtime_deferred_frees != NULL))
    runtime_free_deferred ();
}

/* ---- Private memory (runtime.c) ---- */

/* SIZE bytes of zeroed private memory, reserved without commitment, or NULL. */
void *runtime_map (size_t size);
void runtime_unmap (void *address, size_t size);
/* Entries for one of the runtime's hash tables that full profiling
   makes FULL entries long: SAMPLED when sample_interval is above 1 as it
   is made (runtime.c).  */
size_t runtime_table_entries (size_t full, size_t sampled);

/* ---- Log (log.c) ---- */

void log_configure (const char *path);
/* Open log_path again at the next line written.  */
void log_reopen (void);
void log_printf (const char *format, ...)
    __attribute__ ((format (printf, 1, 2)));
/* Write LENGTH bytes of BUFFER to the log as they are.  */
void log_write (const char *buffer, size_t length);

/* ---- Shadow (shadow.c) ---- */

bool shadow_reserve (void);
/* Reserve the shadow by raw system calls, once: safe in an IFUNC
   resolver (shadow_reserve logs a failure).  0, or the error number.  */
int shadow_reserve_by_syscalls (void);
/* Sum the access counters covering [BLOCK, BLOCK+GRANULES*64) and clear
   them when CLEAR; *TOUCHED_COUNTERS gets the number of those counters
   that are not 0, counted in the same pass.  In histogram mode also fill
   HISTOGRAM (HISTOGRAM_SIZE entries, may be 0).  */
uint64_t shadow_collect (uintptr_t block, size_t granules, bool clear,
                         uint64_t *touched_counters, uint64_t *histogram,
                         uint32_t histogram_size);
void shadow_clear (uintptr_t block, size_t granules);

/* ---- The program's globals (globals.c) ---- */

struct address_range
{
  uintptr_t start, end; /* [start, end) */
};
/* The non-executable PT_LOAD segments (where global variables live) of
   the main program, or with ALL_OBJECTS of every loaded object, into
   RANGES (at most MAX).  Returns their count; *BIAS (when not NULL) is
   the main program's load bias.  */
size_t find_data_segments (struct address_range *ranges, size_t max,
                           bool all_objects, uintptr_t *bias);

/* The most granule records globals_collect can give: the granules of the
   main program's data segments.  */
size_t globals_capacity (void);
/* Fill OUT (at most CAPACITY records) with the granules of the main
   program's data segments whose shadow counts accesses, in ascending
   address order, module-relative.  Returns the count.  */
size_t globals_collect (struct memprof_extra_global *out, size_t capacity);
/* Clear the counters of the main program's data segments.  */
void globals_reset (void);
/* Find the main program's data segments once, at start-up, so that
   globals_fork_child never needs the loader's lock.  */
void globals_start (void);
/* globals_reset in a fork child's handler, from the segments found at
   start-up (no dl_iterate_phdr: its lock may be held for ever there).  */
void globals_fork_child (void);

/* ---- Stack capture (stack.c) ---- */

/* The current thread's stack: [*LOW, *HIGH), found once per thread.  */
void thread_stack_bounds (uintptr_t *low, uintptr_t *high);
/* Hands the thread's stack to the plugin's run-time stack checks
   (stack_checks.c).  */
void publish_thread_stack (uintptr_t low, uintptr_t high);

/* The most frames captured before the runtime's own are removed.  */
#define STACK_CAPTURE_MAX (256 + 32)

/* Capture the current call stack into PCS (at most MAX entries), starting
   at the frame that returns to CALLER_RETURN (the return address of the
   interposed entry point), as return address - 1.  Returns the count.  */
int stack_capture (uintptr_t *pcs, int max, uintptr_t caller_return);
/* stack_capture in two steps.  The return addresses from CALLER_RETURN
   outwards (as they are, not minus 1), as the unwinder option captures
   them, into WHOLE (STACK_CAPTURE_MAX entries), and into FUNCTIONS the
   function of each where known (0 where not); returns the count.  */
int stack_capture_raw (uintptr_t *whole, uintptr_t *functions,
                       uintptr_t caller_return);
/* The frame of the entry point whose path is running (its return
   address is the program's), for the capture to start from; NULL when
   none is known.  */
extern __thread const uintptr_t *stack_entry_frame
    __attribute__ ((tls_model ("initial-exec")));
/* Every entry point whose path may capture a stack runs it between
   these two, in its own frame (stack.c, "The entry's frame").  */
#define STACK_ENTRY_BEGIN()                                                    \
  const uintptr_t *entry_frame_before = stack_entry_frame;                     \
  stack_entry_frame = __builtin_frame_address (0)
#define STACK_ENTRY_END() (stack_entry_frame = entry_frame_before)
/* The same by a full unwind with libunwind, whatever the unwinder option
   (for verify_contexts).  */
int stack_capture_full (uintptr_t *whole, uintptr_t *functions,
                        uintptr_t caller_return);
/* What stack_capture keeps of WHOLE[0, COUNT) (changed in place): minus 1,
   recursion folded, cut to MAX, into PCS.  Returns the count.  */
int stack_finish (uintptr_t *pcs, int max, uintptr_t *whole,
                  uintptr_t *functions, int count);
/* context_capture (below) when the folded walk did not give the context,
   or with verbosity or verify_contexts (context_cache.c).  */
struct depot_context *context_capture_other (int max, uintptr_t caller_return);
/* With verify_contexts=1 or verbosity=1: what the context cache did.  */
void context_cache_report (void);
/* With verbosity=1: how unwinder=fast captured the stacks so far.  */
void stack_report (void);

/* A lock-free map from code addresses to a value (pcmap.c).  */
struct pc_entry;
struct pc_map
{
  struct pc_entry *_Atomic table;
};
/* PC's value, 0 when it has none.  */
uint64_t pc_map_get (struct pc_map *map, uintptr_t pc);
/* Give PC the value VALUE (not 0); nothing when the map is full.  */
void pc_map_set (struct pc_map *map, uintptr_t pc, uint64_t value);
/* Set the bits MASK of PC's value to BITS; with ONLY_IF_CLEAR, only if
   they are all 0.  False when nothing was changed.  */
bool pc_map_update (struct pc_map *map, uintptr_t pc, uint64_t mask,
                    uint64_t bits, bool only_if_clear);
/* Clear the values of the addresses in [LOW, HIGH): code unloaded.  */
void pc_map_forget_range (struct pc_map *map, uintptr_t low, uintptr_t high);

/* The start of the function PC (a return address - 1) is in, from the
   unwind tables, learnt once per PC (stack.c); PC itself when no unwind
   information covers it.  */
uintptr_t stack_function_of (uintptr_t pc);

/* Fold recursion in PCS[0, DEPTH) (leaf first) in place (fold.c): one
   frame per function, MEMPROF_RAW_FOLD_PC where frames were dropped.
   FUNCTIONS[i] is the function of PCS[i], or 0 when not looked up yet.
   Returns the new depth.  */
int stack_fold_recursion (uintptr_t *pcs, uintptr_t *functions, int depth);
/* With fold_recursion: the context stack_finish and depot_intern give for
   the raw stack WHOLE[0, COUNT) (leaf first, as stack_capture_raw gives
   it, FUNCTIONS as it gives them) cut to MAX, through a memo of the
   folds (fold_memo.c); NULL when the memo is full.  */
struct depot_context *fold_memo_context (const uintptr_t *whole,
                                         const uintptr_t *functions, int count,
                                         int max);
/* The steps and contexts the fold memo did not hold, for this thread.  */
uint64_t fold_memo_thread_misses (void);
/* A list of frames the fold keeps, root first (fold_memo.c); NULL is
   the empty list.  */
struct fold_node;
/* The list the fold keeps after NODE and the frames RETURN_ADDRESSES[COUNT
   - 1] down to [0] (leaf first, rootwards to leafwards), of FUNCTIONS[i]
   (0: not looked up yet); the list after each in NODES[i]; NULL when the
   memo is full.  The folded walk uses fold_memo_extend_inline
   (fold_memo.h).  */
const struct fold_node *fold_memo_extend (const struct fold_node *node,
                                          const uintptr_t *return_addresses,
                                          const uintptr_t *functions, int count,
                                          const struct fold_node **nodes);
/* fold_memo_node_context when NODE has no context for MAX yet.  */
struct depot_context *fold_memo_node_context_made (const struct fold_node *node,
                                                   int max);
/* Where a node (fold_memo.c) keeps its list's context cut to a MAX, as
   one word: the context's address in the low FOLD_CONTEXT_MAX_SHIFT bits,
   MAX above; 0: none yet.  fold_memo.c asserts both.  */
#define FOLD_NODE_CONTEXT_OFFSET 24
#define FOLD_CONTEXT_MAX_SHIFT 48
/* NODE's list cut to MAX frames (its leaf side), interned: the context
   stack_finish and depot_intern give for every stack folded to it.  The
   hot case, one load, inline in the folded walk (a call of its own cost
   3 instructions an allocation on binary_trees).  */
static inline struct depot_context *
fold_memo_node_context (const struct fold_node *node, int max)
{
  uintptr_t word = atomic_load_explicit (
      (const _Atomic uintptr_t *) ((const char *) node
                                   + FOLD_NODE_CONTEXT_OFFSET),
      memory_order_acquire);
  if (LIKELY (word != 0 && word >> FOLD_CONTEXT_MAX_SHIFT == (uintptr_t) max))
    return (struct depot_context *) (word
                                     & ((1UL << FOLD_CONTEXT_MAX_SHIFT) - 1));
  return fold_memo_node_context_made (node, max);
}
/* With fold_recursion and unwinder=fast: the context of the allocation
   made by the caller returning to CALLER_RETURN, cut to MAX, walked and
   folded in one pass from the thread's last folded walk (stack.c, "The
   last folded walk"); NULL when that way cannot give it (the caller then
   captures and folds as before).  Called only while stack_last_depth is
   below STACK_CAPTURE_MAX.  */
struct depot_context *stack_capture_folded (int max, uintptr_t caller_return);
/* The depth of the thread's last stack (stack.c): from
   STACK_CHAIN_FRAMES_MIN frames on, the next raw capture is by the
   thread's last chain; from STACK_CAPTURE_MAX on, the next stack is not
   walked by the folded walk either.  */
extern __thread int stack_last_depth
    __attribute__ ((tls_model ("initial-exec")));
#define STACK_CHAIN_FRAMES_MIN 24

/* The context of the allocation made by the caller returning to
   CALLER_RETURN, its stack cut to MAX frames: stack_capture and
   depot_intern, through the thread's context cache (context_cache.c).
   The common way, the folded walk of a short stack, inline in the
   allocation paths: as a function of its own it was one more frame (its
   saved registers, its checks) on every allocation's way to the walk,
   about 14 instructions an allocation on binary_trees.  */
static inline struct depot_context *
context_capture (int max, uintptr_t caller_return)
{
  /* Stacks deeper than the folded walk keeps go the thread's last
     chain's way (context_capture_other).  */
  if (LIKELY (runtime_options.fold_recursion && runtime_options.verbosity == 0
              && !runtime_options.verify_contexts
              && stack_last_depth < STACK_CAPTURE_MAX))
    {
      struct depot_context *context = stack_capture_folded (max, caller_return);
      if (LIKELY (context != NULL))
        return context;
    }
  return context_capture_other (max, caller_return);
}

/* Bytes of user memory one shadow counter covers: 64, or 8 in histogram
   mode.  */
static inline uint32_t
shadow_granule_size (void)
{
  return runtime_histogram ? MEMPROF_HISTOGRAM_GRANULE_SIZE
                           : MEMPROF_GRANULE_SIZE;
}

/* ---- Stack depot and per-context records (depot.c) ---- */

/* What a context's side-file record (extraformat.h) accumulates beyond
   its MIB, weighted as the MIB's Totals are.  The live counts of the
   side file exist only in a dump's snapshot.  */
struct context_extra
{
  uint64_t untouched_allocations; /* folded with an access count of 0 */
  uint64_t touched_bytes; /* nonzero counters x granule, at most the size */
};

/* A context's share of the heap now (kept up to date on every recorded
   allocation and free while the process has one thread), at its peak and
   at the timeline's last sample (peak.c), weighted as its MIB; each of
   the last two valid only when its generation is the current walk's.  */
struct context_peak
{
  /* What every allocation and free touches first (in the context's line
     3, with its lock: struct depot_context).  */
  _Atomic int64_t live_bytes, live_blocks;
  _Atomic uint32_t listed;
  struct depot_context *next_listed; /* peak.c's list of contexts */
  uint64_t peak_bytes, peak_blocks, peak_generation; /* snapshot_lock */
  uint64_t sample_bytes, sample_generation;          /* timeline_lock */
};

/* The values of the last block depot_fold_block folded into a context
   the long way (size 0: none since the MIB was last empty): a block with
   the same access count, size and lifetime leaves every Min and Max of
   the MIB as they are and has the same densities (depot.c).  */
struct context_last_fold
{
  uint64_t accesses, density, lifetime_density;
  uint32_t size, lifetime;
};

/* A record starts on a cache line (DEPOT_RECORD_ALIGN), and its fields
   are placed by the lines a free and an allocation touch: line 0 the
   chain and the last long fold, lines 1 and 2 the MIB (a fold updates
   its first 124 bytes), line 3 the lock, the side-file counts and the
   peak's live counts.  A free touches lines 0-3, an allocation line 3
   (docs/internals.md, "The stack depot's records").  */
#define DEPOT_RECORD_ALIGN 64
struct depot_context
{
  struct depot_context *_Atomic next; /* bucket chain */
  uint64_t hash;
  uint64_t id; /* the stack id in the profile, from 1 */
  uint32_t depth;
  struct context_last_fold last_fold;
  struct memprof_mib mib;     /* alloc_count 0: nothing recorded */
  spinlock_t lock;            /* guards mib, extra, last_fold and histogram */
  struct context_extra extra; /* for the side file */
  struct context_peak peak;   /* at the peak and at a sample (peak.c) */
  uint64_t *histogram;        /* mib.access_histogram_size used entries */
  uint32_t histogram_capacity;
  uint32_t snapshot_index; /* used by the profile writer under its lock */
  uintptr_t pcs[];         /* leaf first */
};
_Static_assert(offsetof (struct depot_context, last_fold)
                       + sizeof (struct context_last_fold)
                   <= DEPOT_RECORD_ALIGN,
               "the last fold in line 0");
_Static_assert(offsetof (struct depot_context, mib) == DEPOT_RECORD_ALIGN,
               "the MIB's folded fields in lines 1 and 2");
_Static_assert(offsetof (struct depot_context, peak.listed) + sizeof (uint32_t)
                   <= 4 * DEPOT_RECORD_ALIGN,
               "lock, side-file counts and live counts in line 3");

/* The context for this stack, created on first sight; never NULL (when
   the depot is full, a shared overflow context is returned).  */
struct depot_context *depot_intern (const uintptr_t *pcs, uint32_t depth);
/* Fold one allocation's MIB (and histogram) and its side-file counts
   into CONTEXT.  */
void depot_fold (struct depot_context *context, const struct memprof_mib *mib,
                 const uint64_t *histogram, const struct context_extra *extra);
struct live_block;
/* depot_fold for one block freed at NOW on DEALLOC_CPU that saw ACCESSES
   accesses in TOUCHED_COUNTERS counters, with no histogram: the MIB that mib_init_one and mib_scale
   would make of it, merged as mib_merge would, without making it.  */
void depot_fold_block (const struct live_block *block, uint64_t accesses,
                       uint64_t touched_counters, uint32_t now,
                       uint32_t dealloc_cpu);
/* The side-file counts of one allocation of SIZE bytes that saw ACCESSES
   accesses, TOUCHED_COUNTERS of its counters (of GRANULE_SIZE bytes each)
   not 0, standing for WEIGHT allocations (sampling), weighted as
   mib_scale weights its MIB.  */
void context_extra_init_one (struct context_extra *extra, uint64_t size,
                             uint64_t accesses, uint64_t touched_counters,
                             uint32_t granule_size, uint32_t weight);
/* Call VISIT for every context.  */
void depot_for_each (void (*visit) (struct depot_context *, void *),
                     void *cookie);
void depot_reset_records (void);
void depot_fork_child (void);
uint64_t depot_context_count (void);

/* A buffer of COUNT u64 values from the depot's arena (never freed).  */
uint64_t *depot_arena_values (uint32_t count);

/* ---- Dumps on signal and timer; fork (control.c) ---- */

/* From the library's constructor (never from inside malloc).  */
void control_start (void);

/* ---- Live allocations (allocator.c) ---- */

void allocator_fork_prepare (void);
void allocator_fork_release (void);

struct block_header;
typedef void (*live_block_visitor) (uintptr_t user, uint64_t size,
                                    struct depot_context *context,
                                    uint32_t alloc_timestamp,
                                    uint32_t alloc_cpu, uint32_t weight,
                                    void *cookie);
/* Call VISIT for every live recorded allocation (malloc's, then the
   heaps'), with its block's lock held: its address, size, context,
   allocation time and CPU, and the number of allocations it stands for
   (sampling).  With LOCK_ATTEMPTS not 0, a list lock still busy after
   that many tries stops the walk: false is returned.  */
bool allocator_for_each_live (live_block_visitor visit, void *cookie,
                              unsigned long lock_attempts);

/* A recorded block, as malloc's and the heaps' have it.  USER is
   granule-aligned; the block's counters are the granules_for (SIZE) from
   there.  */
struct live_block
{
  uintptr_t user;
  uint64_t size;
  struct depot_context *context;
  uint32_t alloc_timestamp, alloc_cpu, weight;
};
struct depot_context *allocator_capture_context (uint64_t size,
                                                 uintptr_t caller_return,
                                                 uint32_t *weight);
/* Fold a block freed at NOW on CPU (runtime_now_ms and
   runtime_current_cpu, read by the caller with the peak's TSC: a
   clock_stamp) into its context, its counters cleared.  */
void allocator_fold_freed_at (const struct live_block *block, uint32_t now,
                              uint32_t cpu);
/* The hooks, the events module, the trace or the runtime's state changed:
   the unsampled path's flags are recomputed (allocator.c).  */
void allocator_observers_changed (void);
/* The unsampled path's flags (allocator.c): UNWATCHED, no hooks, events
   or trace; with SAMPLING, malloc may leave an allocation out at once.  */
#define UNSAMPLED_UNWATCHED 1U
#define UNSAMPLED_SAMPLING 2U
#define UNSAMPLED_OPEN (UNSAMPLED_UNWATCHED | UNSAMPLED_SAMPLING)
/* With UNSAMPLED_OPEN: the blocks sampling leaves out, up to
   SMALL_HEAP_MAX bytes, come from the small heap (small_heap.c).  */
#define UNSAMPLED_SMALL_HEAP 4U
extern _Atomic unsigned char __memprof_unsampled_path;
/* The flags became VALUE: the call sites of direct allocation calls
   that they no longer let decide alone take the runtime's path again
   (direct_calls.c).  */
void direct_calls_observers_changed (unsigned char value);
/* allocator.c's malloc, calloc, realloc and free under hidden names, for
   direct_calls.c's jumps without the PLT.  */
void *allocator_malloc (size_t size);
void *allocator_calloc (size_t count, size_t size);
void *allocator_realloc (void *pointer, size_t size);
void allocator_free (void *pointer);

/* ---- Blocks of the program's own heaps (heaps.c) ---- */

/* As allocator_for_each_live, for the heaps' blocks.  */
bool heaps_for_each_live (live_block_visitor visit, void *cookie,
                          unsigned long lock_attempts);
void heaps_fork_prepare (void);
void heaps_fork_release (void);

/* The number of histogram entries kept for a block of SIZE bytes.  */
uint32_t histogram_entries_for (uint64_t size);
/* Granules covered by a block of SIZE bytes (at least one).  */
static inline size_t
granules_for (uint64_t size)
{
  return size == 0 ? 1
                   : (size + MEMPROF_GRANULE_SIZE - 1) >> MEMPROF_GRANULE_SHIFT;
}

/* ---- Small blocks in slots of the runtime's own (slab.c) ---- */

/* The largest block a slot holds, and the reserved range of slots.  */
#define SLAB_MAX_SIZE 512
#define SLAB_REGION_BYTES (64UL << 30)
/* Spans of one class at a time, and the empty ones kept committed.  */
#define SLAB_SPAN_SHIFT 20
#define SLAB_SPAN_BYTES (1UL << SLAB_SPAN_SHIFT)
#define SLAB_EMPTY_SPANS_KEPT 8
/* At most this many when the program takes given-back spans again, for
   this long after it last took a span from the pool (slab_pool_decay_ms,
   which tests may lower).  */
#define SLAB_EMPTY_SPANS_KEPT_MAX 1024
#define SLAB_KEPT_DECAY_MS 5000
extern uint32_t slab_pool_decay_ms;
/* The range's start; until it is reserved, a value no user pointer minus
   it falls below SLAB_REGION_BYTES (the range would be the top of the
   address space, the kernel's): slab_owns must be false for every block
   when there are no slots (small_slots=0, sampling, a failed reserve),
   including the low addresses of a non-PIE program's heap.  */
#define SLAB_UNRESERVED ((uintptr_t) 0 - SLAB_REGION_BYTES)
extern uintptr_t __memprof_slab_base;

/* Is POINTER in the slots' range?  */
static inline bool
slab_owns (const void *pointer)
{
  return (uintptr_t) pointer - __memprof_slab_base < SLAB_REGION_BYTES;
}
/* Does an allocation of SIZE bytes aligned to ALIGNMENT go to a slot?  */
static inline bool
slab_takes (size_t size, size_t alignment)
{
  return size <= SLAB_MAX_SIZE && alignment <= MEMPROF_GRANULE_SIZE
         && runtime_options.small_slots && runtime_options.sample_interval <= 1;
}
/* A slot for SIZE bytes (at most SLAB_MAX_SIZE), recorded as made by the
   caller returning to CALLER_RETURN (hooks and events told); NULL when
   there is no slot left: the caller uses glibc's memory.  */
void *slab_allocate (size_t size, uintptr_t caller_return);
/* Free the slot block POINTER (slab_owns it); a pointer that is not a
   block in use is reported once on the log and ignored.  */
void slab_free (uintptr_t pointer);
/* The size and context id (0: not recorded; CONTEXT_ID may be NULL) of
   the slot block POINTER; false when it is not a block in use.  */
bool slab_block (uintptr_t pointer, uint64_t *size, uint32_t *context_id);
/* As allocator_for_each_live, for the slots' blocks.  */
bool slab_for_each_live (live_block_visitor visit, void *cookie,
                         unsigned long lock_attempts);
void slab_fork_prepare (void);
void slab_fork_release (void);
/* What the slots hold now (for tests and stats).  */
struct slab_usage
{
  uint64_t cached_slots[SLAB_MAX_SIZE / MEMPROF_GRANULE_SIZE]; /* in the
                                 threads' caches, per class */
  uint64_t spans_in_use;           /* spans of a class */
  uint64_t spans_carved;           /* spans of the range ever used */
  uint64_t spans_empty_kept;       /* empty, pages kept */
  uint64_t spans_empty_given_back; /* empty, pages given back */
  uint64_t spans_given_back_total; /* times a span's pages went back */
  uint64_t spans_kept_now;         /* empty spans the pool keeps now */
};
void slab_usage (struct slab_usage *usage);

/* ---- stats=1 (stats.c) ---- */

extern bool stats_enabled;
void stats_start (void);
/* Count ACCESSES instrumented accesses at ADDRESS (callback mode).  */
void stats_classify (uintptr_t address, uint64_t accesses);
/* The same for a range access (memcpy...), in any mode.  */
void stats_classify_range (uintptr_t address, uint64_t accesses);
/* Print the summary; HEAP_ACCESSES is the profile's total, of which
   LIVE_HEAP_COUNTERS were still in the shadow.  */
void stats_report (uint64_t heap_accesses, uint64_t live_heap_counters);

/* ---- The heap's peak and timeline (peak.c) ---- */

void peak_start (void);
/* peak_note_allocation and peak_note_free, inline.  */
#include "peak.h"
/* The side file's version 3 section, for a dump now: fill PEAK and hand
   out the per-context records (at most CONTEXT_CAPACITY into CONTEXTS)
   and the timeline (*SAMPLES, peak->sample_count of them).  */
void peak_collect (struct memprof_extra_peak *peak,
                   struct memprof_extra_peak_context *contexts,
                   size_t context_capacity,
                   const struct memprof_extra_sample **samples);
/* The most records peak_collect can give.  */
size_t peak_context_capacity (void);
/* fork: no walk may be half done in the child (taken after the profile's
   and the trace's locks, before the allocator's).  */
/* Walks of the live blocks for the peak's copy or a timeline sample
   that a signal handler gave up (peak.c): stats=1.  */
extern _Atomic uint64_t peak_walks_given_up;
void peak_fork_prepare (void);
void peak_fork_release (void);

/* ---- Profile (profile.c) ---- */

/* Write a profile (and, with write_extra, its side file) now, for REASON.
   MEMPROF_EXTRA_AT_EXIT: the exit profile, written only when
   write_profile is on.  Returns 0 or -1.  */
int profile_dump (enum memprof_extra_reason reason);
/* Of the last profile taken: the total of its TotalAccessCount, and the
   part of it that came from blocks still live.  */
extern uint64_t profile_heap_accesses, profile_live_heap_counters;
void profile_fork_prepare (void);
void profile_fork_parent (void);
void profile_fork_child (void);

/* The output files' names: PATTERN with %p the pid, %n SEQUENCE and %%
   a '%', into OUT.  False when it does not fit.  */
bool expand_output_name (const char *pattern, unsigned sequence, char *out,
                         size_t size);
/* Create a fresh file next to FINAL (renamed to FINAL once complete, so
   that no half-written file ever has the final name); its name goes to
   TEMP.  A descriptor, or -1 with errno.  */
int open_temporary (const char *final, char *temp, size_t size);
/* FINAL names something other than a regular file or a directory (a
   character device such as /dev/null, a FIFO, a socket): it is written
   in place, as a shell's redirection writes it, never replaced by a
   rename (which would put a regular file where /dev/null was).  */
bool written_in_place (const char *final);
/* open_temporary, or FINAL itself when it is written in place (TEMP is
   then empty).  A FIFO without a reader is an error (ENXIO), not a wait
   at the program's exit: it is opened non-blocking, then made blocking.  */
int open_output (const char *final, char *temp, size_t size);
/* Put TEMP, complete, in place as FINAL (0, or an errno); nothing to do
   for a file written in place.  */
int put_in_place (const char *temp, const char *final);
/* Remove what a failed write left: the temporary file, or nothing.  */
void discard_output (const char *temp);

/* ---- Options compiled into the program (compiled_options.c) ---- */

/* clang's name for the profile's path; the runtime's definition is weak
   and empty (llvm_names.c).  */
MEMPROF_EXPORT extern char __memprof_profile_filename[];
/* Apply, in this order, __memprof_profile_filename, the string the
   plugin embedded and the program's __memprof_default_options (); each
   problem goes to REPORT.  */
void options_apply_compiled (struct memprof_options *options,
                             memprof_option_report_fn report, void *cookie);

/* ---- Malloc and free hooks (hooks.c) ---- */

extern _Atomic int hooks_count;
/* Register the hooks the program defines by name (at start-up).  */
void hooks_start (void);
void hooks_run_malloc (const void *pointer, size_t size);
void hooks_run_free (const void *pointer);

/* After every allocation the program makes, and before every free.  */
static inline void
hooks_after_allocation (const void *pointer, size_t size)
{
  if (UNLIKELY (atomic_load_explicit (&hooks_count, memory_order_relaxed)))
    hooks_run_malloc (pointer, size);
}

static inline void
hooks_before_free (const void *pointer)
{
  if (UNLIKELY (atomic_load_explicit (&hooks_count, memory_order_relaxed)))
    hooks_run_free (pointer);
}

/* ---- Profiles on abort and fatal signals (signals.c) ---- */

/* Install the handlers handle_abort and handle_fatal_signals ask for
   (from the library's constructor).  */
void signals_start (void);
/* Write the profile from a signal handler: as profile_dump, but giving up
   (with a line on the log) rather than waiting for a lock the
   interrupted thread may hold.  Returns 0 or -1.  */
int profile_dump_in_signal (void);

/* ---- Sampled access counting (access_bursts.c) ---- */

/* What the side file's access_sample_rate says: 1 when every access is
   counted, else the largest rate of access_sample_rate (callbacks) and
   of the bursts of -fplugin-arg-memprof-sample-accesses.  */
uint64_t access_sample_rate_of_profile (void);

/* What a range the interceptors count adds per step: 1 when accesses are
   not sampled; with sampled access counting, RATE in this thread's burst
   and 0 in its gap.  */
unsigned long library_access_weight (void);

/* Sampled access counting, in the interceptors' fast path: is this
   thread between bursts (so no library call counts)?  An inline test of
   the countdown against the burst's checks (0 while no module samples
   accesses), instead of a call.  */
extern __thread long __memprof_access_countdown
    __attribute__ ((tls_model ("initial-exec")));
extern _Atomic uint64_t __memprof_access_burst_checks;
static inline bool
between_access_bursts (void)
{
  uint64_t burst = atomic_load_explicit (&__memprof_access_burst_checks,
                                         memory_order_relaxed);
  return burst != 0 && (unsigned long) __memprof_access_countdown >= burst;
}

#endif /* MEMPROF_INTERNAL_H */
