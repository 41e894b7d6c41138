/* Interceptors of the C library's mem* and str* functions, as the
   sanitizers have: a memcpy or a strlen that code the plugin did not
   instrument makes on the heap (libstdc++.so filling a std::string, a
   third-party library copying a buffer) counts its ranges in the shadow,
   one count per 8 bytes as __memprof_range_access counts them.

   What counts, exactly once:
   - memcpy, memmove, mempcpy and memset count only when called from
     outside the instrumented modules: the plugin already turns those
     calls of instrumented code into a range call (gcc-plugin/accesses.cc),
     so counting them here too would count them twice.  A module is
     instrumented when its dynamic symbols name __memprof_init (its
     constructors call it); each call of __memprof_init looks at the
     modules loaded since the last one and records the executable
     segments of the instrumented ones; a module dlclose unloads is
     forgotten (modules.c: interceptors_forget_module), since another
     may be mapped at its addresses;
   - the other functions (memcmp, memchr, strlen, strcmp, strcpy...) count
     from every caller: the plugin counts none of them;
   - the runtime's own calls never count (calls from libmemprof.so's own
     code), and nothing counts before an instrumented module has called
     __memprof_init: an uninstrumented program run with LD_PRELOAD keeps
     having no access counts at all, which `memprof` reports as such.
   The bytes counted are those the function's result shows it read or
   wrote (a strcmp to the first difference, a strlen to the NUL included),
   as LLVM's runtime counts them.

   What is not seen: calls made inside the C library itself (its internal
   calls do not go through the dynamic linker), inlined or vectorized
   copies in uninstrumented code, and calls through a function pointer in
   instrumented code.  Only the shared runtime (libmemprof.so) has these
   interceptors: a static link does not interpose another library's
   calls.  Option count_library_accesses=0 turns them off.  */

#define _GNU_SOURCE
#include "internal.h"

#include <dlfcn.h>
#include <link.h>
#include <string.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>

/* Executable segments of instrumented modules, and of the runtime.  */
#define MAX_CODE_RANGES 256

struct code_range
{
  uintptr_t start, end;
  /* The module the range is in: its bias and module_name_hash.  */
  uintptr_t bias;
  uint64_t name_hash;
};

static struct code_range instrumented_code[MAX_CODE_RANGES];
static _Atomic size_t instrumented_code_count;
static spinlock_t modules_lock;
/* The load addresses of the modules already looked at.  */
static struct code_range examined_modules[MAX_CODE_RANGES];
static size_t examined_module_count;

static struct code_range runtime_code[8];
static _Atomic size_t runtime_code_count;

/* Odd while a writer (under modules_lock) changes the lists above, even
   otherwise; bumped twice by each change.  A reader that scanned the
   lists takes its answer only when the generation was even and the same
   before and after the scan; the threads' verdicts (below) hold for one
   generation.  */
static _Atomic unsigned code_generation;

/* A writer blocks every signal while the generation is odd (SAVED: the
   mask to restore): no signal handler on its own thread, which could not
   wait for it, ever reads the lists half written, and the readers of the
   other threads wait for it (scan_code_ranges).  */
/* Set on the writer's thread while it changes the lists: a call it makes
   meanwhile (a memmem or a callback of dl_iterate_phdr the program
   interposes, calling memcmp) cannot wait for itself, and is not
   counted.  */
static __thread bool writing_code_lists
    __attribute__ ((tls_model ("initial-exec")));

static void
code_lists_change_begin (sigset_t *saved)
{
  sigset_t all;
  sigfillset (&all);
  pthread_sigmask (SIG_SETMASK, &all, saved);
  writing_code_lists = true;
  atomic_fetch_add_explicit (&code_generation, 1, memory_order_acq_rel);
}

static void
code_lists_change_end (const sigset_t *saved)
{
  atomic_fetch_add_explicit (&code_generation, 1, memory_order_release);
  writing_code_lists = false;
  pthread_sigmask (SIG_SETMASK, saved, NULL);
}

/* The runtime's own module: the one that holds this function.  */
static bool
is_runtime_module (const struct dl_phdr_info *info)
{
  uintptr_t own = (uintptr_t) &interceptors_note_modules;
  for (size_t i = 0; i < info->dlpi_phnum; i++)
    {
      const ElfW (Phdr) *segment = &info->dlpi_phdr[i];
      uintptr_t start = info->dlpi_addr + segment->p_vaddr;
      if (segment->p_type == PT_LOAD && own >= start
          && own < start + segment->p_memsz)
        return true;
    }
  return false;
}

/* Does the module name __memprof_init in its dynamic string table: was it
   built with the plugin (its constructors call it)?  The constructor's
   call is often a tail call, so its return address does not tell the
   module.  */
static bool
is_instrumented_module (const struct dl_phdr_info *info)
{
  static const char name[] = MEMPROF_INIT_NAME;
  for (size_t i = 0; i < info->dlpi_phnum; i++)
    {
      const ElfW (Phdr) *segment = &info->dlpi_phdr[i];
      if (segment->p_type != PT_DYNAMIC)
        continue;
      const ElfW (Dyn) *dynamic
          = (const ElfW (Dyn) *) (info->dlpi_addr + segment->p_vaddr);
      uintptr_t strings = 0, size = 0;
      for (; dynamic->d_tag != DT_NULL; dynamic++)
        if (dynamic->d_tag == DT_STRTAB)
          strings = dynamic->d_un.d_ptr;
        else if (dynamic->d_tag == DT_STRSZ)
          size = dynamic->d_un.d_val;
      /* The dynamic linker relocates DT_STRTAB in place on x86-64; the
         vDSO's is left as the file has it.  */
      if (strings != 0 && strings < info->dlpi_addr)
        strings += info->dlpi_addr;
      return strings != 0
             && memmem ((const void *) strings, size, name, sizeof name)
                    != NULL;
    }
  return false;
}

static void
add_code_ranges (const struct dl_phdr_info *info, struct code_range *ranges,
                 size_t capacity, _Atomic size_t *count)
{
  size_t used = atomic_load (count);
  for (size_t i = 0; i < info->dlpi_phnum && used < capacity; i++)
    {
      const ElfW (Phdr) *segment = &info->dlpi_phdr[i];
      if (segment->p_type != PT_LOAD || !(segment->p_flags & PF_X))
        continue;
      ranges[used].start = info->dlpi_addr + segment->p_vaddr;
      ranges[used].end = ranges[used].start + segment->p_memsz;
      ranges[used].bias = info->dlpi_addr;
      ranges[used].name_hash = module_name_hash (info->dlpi_name);
      used++;
    }
  atomic_store (count, used);
}

static int
examine_module (struct dl_phdr_info *info, size_t size, void *data)
{
  (void) size;
  (void) data;
  /* A module is its bias and its name: another one mapped where an
     unloaded one was, before the unloaded one was forgotten, is new.  */
  uint64_t name_hash = module_name_hash (info->dlpi_name);
  for (size_t i = 0; i < examined_module_count; i++)
    if (examined_modules[i].bias == info->dlpi_addr
        && examined_modules[i].name_hash == name_hash)
      return 0;
  if (examined_module_count == MAX_CODE_RANGES)
    return 1;
  examined_modules[examined_module_count++]
      = (struct code_range){ 0, 0, info->dlpi_addr, name_hash };
  bool runtime = is_runtime_module (info);
  if (runtime)
    add_code_ranges (info, runtime_code,
                     sizeof runtime_code / sizeof runtime_code[0],
                     &runtime_code_count);
  else if (is_instrumented_module (info))
    {
      add_code_ranges (info, instrumented_code, MAX_CODE_RANGES,
                       &instrumented_code_count);
      if (runtime_options.verbosity >= 2)
        log_printf ("interceptors: %s is instrumented: its mem* calls are "
                    "counted by the plugin, not here",
                    info->dlpi_name[0] ? info->dlpi_name : "the program");
    }
  return 0;
}

void
interceptors_note_modules (void)
{
  sigset_t saved;
  spin_lock (&modules_lock);
  code_lists_change_begin (&saved);
  dl_iterate_phdr (examine_module, NULL);
  code_lists_change_end (&saved);
  spin_unlock (&modules_lock);
  interceptors_recheck ();
}

/* Drop from RANGES (COUNT of them) those of the module loaded with bias
   BIAS within [LOW, HIGH): not those of a module mapped inside its span
   since.  */
static void
remove_code_ranges (struct code_range *ranges, _Atomic size_t *count,
                    uintptr_t bias, uint64_t name_hash, uintptr_t low,
                    uintptr_t high)
{
  size_t kept = 0, used = atomic_load (count);
  for (size_t i = 0; i < used; i++)
    if (!(ranges[i].bias == bias && ranges[i].name_hash == name_hash
          && ranges[i].start >= low && ranges[i].end <= high))
      ranges[kept++] = ranges[i];
  atomic_store (count, kept);
}

/* See internal.h: the module is no longer examined (a module loaded at
   its address is looked at afresh) and its code no longer counts as
   instrumented.  */
void
interceptors_forget_module (uintptr_t bias, uint64_t name_hash, uintptr_t low,
                            uintptr_t high)
{
  sigset_t saved;
  spin_lock (&modules_lock);
  code_lists_change_begin (&saved);
  size_t kept = 0;
  for (size_t i = 0; i < examined_module_count; i++)
    if (examined_modules[i].bias != bias
        || examined_modules[i].name_hash != name_hash)
      examined_modules[kept++] = examined_modules[i];
  examined_module_count = kept;
  remove_code_ranges (instrumented_code, &instrumented_code_count, bias,
                      name_hash, low, high);
  remove_code_ranges (runtime_code, &runtime_code_count, bias, name_hash, low,
                      high);
  code_lists_change_end (&saved);
  spin_unlock (&modules_lock);
  interceptors_recheck ();
}

/* See internal.h: a fork waits for the writer; the child has the lists
   as the parent had them before or after its change.  */
void
interceptors_fork_prepare (void)
{
  spin_lock (&modules_lock);
}

void
interceptors_fork_release (void)
{
  spin_unlock (&modules_lock);
}

/* Reads of an odd generation a reader spins over before it yields the
   processor to the writer.  */
#define SCAN_SPINS 1000

/* The index of the range of RANGES that holds ADDRESS; COUNT: none.  */
static size_t
range_index (const struct code_range *ranges, size_t count, uintptr_t address)
{
  size_t i = 0;
  while (i < count && !(address >= ranges[i].start && address < ranges[i].end))
    i++;
  return i;
}

static bool
in_ranges (const struct code_range *ranges, size_t count, uintptr_t address)
{
  return range_index (ranges, count, address) < count;
}

/* What scan_code_ranges found: whether the address is in the runtime's
   code and in an instrumented module's, in the generation of the lists
   above the low 32 bits.  */
#define SCAN_IN_RUNTIME 1
#define SCAN_IN_INSTRUMENTED 2
#define SCAN_DONE 4

/* Where ADDRESS is, read while no writer changed the lists: SCAN_DONE
   and the bits above.  A writer on another thread is waited for (it
   holds the generation odd for a walk of the loaded modules at most); a
   signal handler never runs on the writer's own thread while it writes
   (code_lists_change_begin); a call the writer itself makes meanwhile
   gets 0, and does not count.  One value, not pointers to the caller's
   variables: the fast path keeps them in registers.  */
static __attribute__ ((noinline)) uint64_t
scan_code_ranges (uintptr_t address)
{
  for (unsigned attempt = 0;; attempt++)
    {
      unsigned before
          = atomic_load_explicit (&code_generation, memory_order_acquire);
      if (before & 1)
        {
          if (writing_code_lists)
            return 0;
          if (attempt >= SCAN_SPINS)
            sched_yield ();
          continue;
        }
      uint64_t found = SCAN_DONE | (uint64_t) before << 32;
      if (in_ranges (runtime_code, atomic_load (&runtime_code_count), address))
        found |= SCAN_IN_RUNTIME;
      if (in_ranges (instrumented_code, atomic_load (&instrumented_code_count),
                     address))
        found |= SCAN_IN_INSTRUMENTED;
      atomic_thread_fence (memory_order_acquire);
      if (atomic_load_explicit (&code_generation, memory_order_relaxed)
          == before)
        return found;
    }
}

/* The instrumented code range ADDRESS is in, when no range of the
   runtime's own code overlaps it (the runtime linked statically into an
   instrumented program): *LOW and *SPAN, read in GENERATION of the lists
   (false when another one began meanwhile, or no such range).  */
static __attribute__ ((noinline)) bool
instrumented_range_of (uintptr_t address, unsigned generation, uintptr_t *low,
                       uintptr_t *span)
{
  size_t count = atomic_load (&instrumented_code_count);
  size_t i = range_index (instrumented_code, count, address);
  if (i == count)
    return false;
  uintptr_t start = instrumented_code[i].start, end = instrumented_code[i].end;
  size_t runtime_count = atomic_load (&runtime_code_count);
  for (size_t j = 0; j < runtime_count; j++)
    if (runtime_code[j].start < end && runtime_code[j].end > start)
      return false;
  atomic_thread_fence (memory_order_acquire);
  if (atomic_load_explicit (&code_generation, memory_order_relaxed)
          != generation
      || end <= start)
    return false;
  *low = start;
  *span = end - start;
  return true;
}

/* What the range scans of counts_call said about one caller, per thread:
   a loop calling memcmp or memcpy asks about the same return address again
   and again, and a std::map keyed by strings calls memcmp from several
   places of the same instrumented code in turn: a caller in instrumented
   code keeps the verdict for the whole code range it is in (the callers
   LOW to LOW + SPAN - 1), any other caller for its own address (SPAN 1).
   The answer holds for the generation of the lists it was
   read in (a module noted or unloaded starts another).  A signal handler on the
   same thread may ask (memcpy is async-signal-safe) while the entry is
   half written: the entry is written between two steps of SEQUENCE (odd
   while it is written), and a reader that finds it odd or changed under
   it scans the ranges itself.  */
struct caller_verdict
{
  unsigned sequence;
  uintptr_t low, span;
  unsigned generation;
  bool in_runtime, in_instrumented;
};

static __thread struct caller_verdict last_caller
    __attribute__ ((tls_model ("initial-exec")));

/* Does a call from CALLER count, and how many times (0: it does not;
   the weight of library accesses, access_bursts.c, otherwise)?
   RANGES_COUNTED_BY_PLUGIN: the function is one the plugin counts in
   instrumented code.  Inlined: it runs on every counted call.  */
static inline __attribute__ ((always_inline)) unsigned long
counts_call (const void *caller, bool ranges_counted_by_plugin)
{
  size_t instrumented
      = atomic_load_explicit (&instrumented_code_count, memory_order_acquire);
  if (instrumented == 0 || !runtime_options.count_library_accesses)
    return 0;
  unsigned long weight = library_access_weight ();
  if (weight == 0)
    return 0;
  uintptr_t address = (uintptr_t) caller;
  unsigned generation
      = atomic_load_explicit (&code_generation, memory_order_acquire);
  struct caller_verdict *last = &last_caller;
  unsigned sequence = last->sequence;
  atomic_signal_fence (memory_order_seq_cst);
  bool in_runtime = last->in_runtime, in_instrumented = last->in_instrumented;
  /* A verdict is kept with an even generation only: an odd one misses.  */
  bool hit = !(sequence & 1) && address - last->low < last->span
             && last->generation == generation;
  atomic_signal_fence (memory_order_seq_cst);
  if (UNLIKELY (!hit || last->sequence != sequence))
    {
      uint64_t found = scan_code_ranges (address);
      if (found == 0)
        return 0;
      generation = (unsigned) (found >> 32);
      in_runtime = found & SCAN_IN_RUNTIME;
      in_instrumented = found & SCAN_IN_INSTRUMENTED;
      uintptr_t low = address, span = 1;
      if (in_instrumented && !in_runtime)
        instrumented_range_of (address, generation, &low, &span);
      if (!(sequence & 1) && last->sequence == sequence)
        {
          last->sequence = sequence + 1;
          atomic_signal_fence (memory_order_seq_cst);
          last->low = low;
          last->span = span;
          last->generation = generation;
          last->in_runtime = in_runtime;
          last->in_instrumented = in_instrumented;
          atomic_signal_fence (memory_order_seq_cst);
          last->sequence = sequence + 2;
        }
    }
  if (in_runtime || (ranges_counted_by_plugin && in_instrumented))
    return 0;
  return weight;
}

/* Does no call count, and none will until interceptors_recheck: no
   module instrumented (the runtime alone: the always-on and
   allocation-only modes), or count_library_accesses=0?  Then an
   intercepted call is the C library's alone, a tail call, and from then
   on the target of the function's jump: a std::map keyed by strings
   spent 12 % of its time in memcmp's interception with nothing to
   count.  */
static inline bool
nothing_ever_counts (void)
{
  return atomic_load_explicit (&instrumented_code_count, memory_order_relaxed)
             == 0
         || !runtime_options.count_library_accesses;
}

/* SIZE bytes at ADDRESS, each 8-byte step counted WEIGHT times.  */
static inline __attribute__ ((always_inline)) void
count_range_times (const void *address, size_t size, unsigned long weight)
{
  if (size == 0 || weight == 0)
    return;
  uintptr_t first = (uintptr_t) address, last = first + size - 1;
  uintptr_t granules
      = (last & MEMPROF_GRANULE_MASK) - (first & MEMPROF_GRANULE_MASK);
  /* A range within one granule (a short string, a key) or across the
     boundary of two (a key that does not start at a granule): its one or
     two counters here, as __memprof_range_access_weighted would count
     them, without the call through the PLT and the general loop.  The
     steps are FIRST, FIRST + 8, ...: the first granule holds those below
     its end, the second the rest of the range's ceil (SIZE / 8).  */
  if (LIKELY (granules <= MEMPROF_GRANULE_SIZE && last >= first
              && !runtime_histogram && !stats_enabled
              && __memprof_shadow_base != 0))
    {
      uint64_t *counter = memprof_shadow_for (__memprof_shadow_base, first);
      uint64_t steps = (size + MEMPROF_RANGE_STEP - 1) / MEMPROF_RANGE_STEP;
      if (granules == 0)
        {
          *counter += weight * steps;
          return;
        }
      uint64_t in_first
          = (MEMPROF_GRANULE_SIZE - (first & (MEMPROF_GRANULE_SIZE - 1))
             + MEMPROF_RANGE_STEP - 1)
            / MEMPROF_RANGE_STEP;
      counter[0] += weight * in_first;
      if (steps > in_first)
        counter[1] += weight * (steps - in_first);
    }
  else
    __memprof_range_access_weighted (address, size, weight);
}

static inline void
count_range (const void *address, size_t size)
{
  /* Sampled access counting: in a burst only, RATE times (access_bursts.c). */
  count_range_times (address, size, library_access_weight ());
}

/* ---- The C library's functions ---- */

/* Looked up on first use; until then (and while dlsym itself calls one
   of them) the plain loops below stand in.  They must stay loops: GCC
   would otherwise turn them into calls of the very functions they stand
   in for.  */
#define PLAIN __attribute__ ((optimize ("no-tree-loop-distribute-patterns")))

static __thread int resolving __attribute__ ((tls_model ("initial-exec")));

static __attribute__ ((noinline, cold)) void *
resolve (const char *name, void *volatile *slot)
{
  void *found = *slot;
  if (found != NULL || resolving)
    return found;
  resolving++;
  found = dlsym (RTLD_NEXT, name);
  resolving--;
  *slot = found;
  return found;
}

#define REAL(name, type)                                                       \
  static void *volatile real_##name##_slot;                                    \
  static inline type real_##name (void)                                        \
  {                                                                            \
    return (type) resolve (#name, &real_##name##_slot);                        \
  }                                                                            \
  /* NULL until looked up: no call of dlsym on the fast path.  */              \
  static inline type known_##name (void)                                       \
  {                                                                            \
    return (type) real_##name##_slot;                                          \
  }

typedef void *(*copy_fn) (void *, const void *, size_t);
typedef void *(*set_fn) (void *, int, size_t);
typedef void *(*find_fn) (const void *, int, size_t);
typedef int (*compare_fn) (const void *, const void *, size_t);
typedef int (*string_compare_fn) (const char *, const char *);
typedef int (*bounded_string_compare_fn) (const char *, const char *, size_t);
typedef size_t (*length_fn) (const char *);
typedef size_t (*bounded_length_fn) (const char *, size_t);
typedef char *(*char_find_fn) (const char *, int);
typedef char *(*string_copy_fn) (char *, const char *);

REAL (memcpy, copy_fn)
REAL (memmove, copy_fn)
REAL (mempcpy, copy_fn)
REAL (memset, set_fn)
REAL (memcmp, compare_fn)
REAL (strcmp, string_compare_fn)
REAL (strncmp, bounded_string_compare_fn)
REAL (memchr, find_fn)
REAL (strlen, length_fn)
REAL (strnlen, bounded_length_fn)
REAL (strchr, char_find_fn)
REAL (strrchr, char_find_fn)
REAL (strcpy, string_copy_fn)
REAL (stpcpy, string_copy_fn)
REAL (strcat, string_copy_fn)

/* Every one looked up when the library is loaded, before the program's
   threads: dlsym takes the loader's lock, and a first call made later
   could come from inside the runtime holding its own locks (peak.c
   copies a sample under its lock) while another thread, in dlopen with
   the loader's lock held, frees into the runtime and waits for them.  */
__attribute__ ((constructor)) static void
resolve_all (void)
{
  real_memcpy ();
  real_memmove ();
  real_mempcpy ();
  real_memset ();
  real_memcmp ();
  real_strcmp ();
  real_strncmp ();
  real_memchr ();
  real_strlen ();
  real_strnlen ();
  real_strchr ();
  real_strrchr ();
  real_strcpy ();
  real_stpcpy ();
  real_strcat ();
}

PLAIN static void *
plain_move (void *to, const void *from, size_t size)
{
  unsigned char *d = to;
  const unsigned char *s = from;
  if (d < s)
    for (size_t i = 0; i < size; i++)
      d[i] = s[i];
  else
    for (size_t i = size; i > 0; i--)
      d[i - 1] = s[i - 1];
  return to;
}

PLAIN static size_t
plain_length (const char *text, size_t limit)
{
  size_t length = 0;
  while (length < limit && text[length] != '\0')
    length++;
  return length;
}

/* The smallest page size of the machines the runtime runs on: a read
   that stays within the page of a byte known to be readable cannot
   fault.  */
#define SMALLEST_PAGE_SIZE 4096

/* Could 8 bytes at ADDRESS cross into the next page?  */
static inline bool
word_crosses_page (const unsigned char *address)
{
  return ((uintptr_t) address & (SMALLEST_PAGE_SIZE - 1))
         > SMALLEST_PAGE_SIZE - sizeof (uint64_t);
}

/* The bytes of A and B a comparison of at most LIMIT bytes reads: to the
   first difference (or NUL, for strings), included.  Eight bytes at a
   time while they lie within LIMIT and, for strings (whose end is not
   known), within the pages of the bytes before them; the first flagged
   byte of a word is exact on a little-endian machine (a zero byte's
   borrow can only flag bytes above it).  */
PLAIN static inline size_t
compared_bytes (const unsigned char *a, const unsigned char *b, size_t limit,
                bool strings)
{
  const uint64_t ones = 0x0101010101010101UL, highs = 0x8080808080808080UL;
  size_t i = 0;
  while (
      __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && limit - i >= 8
      && !(strings && (word_crosses_page (a + i) || word_crosses_page (b + i))))
    {
      uint64_t x, y;
      __builtin_memcpy (&x, a + i, sizeof x);
      __builtin_memcpy (&y, b + i, sizeof y);
      uint64_t flagged = x ^ y;
      if (strings)
        flagged |= (x - ones) & ~x & highs;
      if (flagged != 0)
        {
          i += (size_t) __builtin_ctzll (flagged) / 8;
          return i + 1;
        }
      i += 8;
    }
  while (i < limit && a[i] == b[i] && !(strings && a[i] == '\0'))
    i++;
  return i < limit ? i + 1 : limit;
}

static inline void *
copy (copy_fn real, void *to, const void *from, size_t size)
{
  return real ? real (to, from, size) : plain_move (to, from, size);
}

/* SIZE bytes at FIRST and at SECOND (a copy's destination and source,
   a comparison's operands) touched by a call from CALLER.  */
static inline void
count_two_ranges (const void *caller, bool counted_by_plugin, const void *first,
                  const void *second, size_t size)
{
  unsigned long weight = counts_call (caller, counted_by_plugin);
  if (weight != 0)
    {
      count_range_times (first, size, weight);
      count_range_times (second, size, weight);
    }
}

static inline size_t
length_of (const char *text)
{
  length_fn real = real_strlen ();
  return real ? real (text) : plain_length (text, (size_t) -1);
}

/* Each exported function is one indirect jump through NAME_target: to
   NAME_entry, which decides as below, until a call has found that
   nothing counts; from then on to the C library's function itself (a
   std::map keyed by strings makes tens of millions of memcmp calls, and
   the check before the jump was 5 instructions of each).  When something
   may start to count (a module noted, an option set), interceptors_recheck
   sends every function to its NAME_entry again.  The jump leaves the
   return address as the caller's: NAME_entry sees the caller.  */
#define JUMP_THROUGH(type, name, parameters, arguments)                        \
  static type name##_entry parameters;                                         \
  static type (*_Atomic name##_target) parameters = name##_entry;              \
  FRAMELESS MEMPROF_EXPORT type name parameters                                \
  {                                                                            \
    return atomic_load_explicit (&name##_target, memory_order_relaxed)         \
        arguments;                                                             \
  }

#define FRAMELESS __attribute__ ((optimize ("omit-frame-pointer")))

/* Bumped by interceptors_recheck: a NAME_entry that found nothing
   counting takes its NAME_target back when a recheck ran meanwhile.  */
static _Atomic unsigned recheck_generation;

/* NAME_entry's decision: the C library's own function, a tail call, when
   nothing counts and it is looked up already (and from then on the
   target of NAME's jump); NAME_counted otherwise (out of line, so that
   this path saves no registers), which looks its own function up: the
   next call takes this path.  Between bursts of sampled access counting
   (containers: 29 % of its time went to the counting path there): the C
   library's function at once, NAME's target left as it is for the next
   burst.  */
#define PASS_THROUGH(name, arguments)                                          \
  do                                                                           \
    {                                                                          \
      unsigned generation = atomic_load (&recheck_generation);                 \
      __typeof__ (known_##name ()) known = known_##name ();                    \
      if (LIKELY (known != NULL) && nothing_ever_counts ())                    \
        {                                                                      \
          atomic_store (&name##_target, known);                                \
          if (atomic_load (&recheck_generation) != generation)                 \
            atomic_store (&name##_target, name##_entry);                       \
          return known arguments;                                              \
        }                                                                      \
      if (LIKELY (known != NULL) && between_access_bursts ())                  \
        return known arguments;                                                \
    }                                                                          \
  while (0)

#define NO_ATTRIBUTES

/* NAME, exported, and NAME_entry (with ATTRIBUTES): the C library's
   function when nothing counts, else COUNTED, an expression of the
   ARGUMENTS and of CALLER, NAME's caller.  */
#define INTERCEPT(attributes, type, name, parameters, arguments, counted)      \
  JUMP_THROUGH (type, name, parameters, arguments)                             \
  attributes static type name##_entry parameters                               \
  {                                                                            \
    PASS_THROUGH (name, arguments);                                            \
    const void *caller = __builtin_return_address (0);                         \
    return counted;                                                            \
  }

/* memcpy and memmove when something may count (out of line: the fast
   path of the exported functions then saves no registers).  */
static __attribute__ ((noinline)) void *
copy_counted (bool move, void *to, const void *from, size_t size,
              const void *caller)
{
  void *result = copy (move ? real_memmove () : real_memcpy (), to, from, size);
  count_two_ranges (caller, true, to, from, size);
  return result;
}

INTERCEPT (NO_ATTRIBUTES, void *, memcpy,
           (void *to, const void *from, size_t size), (to, from, size),
           copy_counted (false, to, from, size, caller))

INTERCEPT (NO_ATTRIBUTES, void *, memmove,
           (void *to, const void *from, size_t size), (to, from, size),
           copy_counted (true, to, from, size, caller))

static __attribute__ ((noinline)) void *
mempcpy_counted (void *to, const void *from, size_t size, const void *caller)
{
  copy_fn real = real_mempcpy ();
  void *result = real ? real (to, from, size)
                      : (char *) plain_move (to, from, size) + size;
  count_two_ranges (caller, true, to, from, size);
  return result;
}

INTERCEPT (NO_ATTRIBUTES, void *, mempcpy,
           (void *to, const void *from, size_t size), (to, from, size),
           mempcpy_counted (to, from, size, caller))

PLAIN static __attribute__ ((noinline)) void *
memset_counted (void *to, int value, size_t size, const void *caller)
{
  set_fn real = real_memset ();
  if (real != NULL)
    real (to, value, size);
  else
    for (size_t i = 0; i < size; i++)
      ((unsigned char *) to)[i] = (unsigned char) value;
  if (counts_call (caller, true))
    count_range (to, size);
  return to;
}

INTERCEPT (PLAIN, void *, memset, (void *to, int value, size_t size),
           (to, value, size), memset_counted (to, value, size, caller))

/* The comparisons: the result is the C library's own (its sign is all
   the standard promises, and programs must see what they saw before); the
   bytes read are counted apart, WEIGHT times each (0: not at all).  */
PLAIN static inline __attribute__ ((always_inline)) int
compare_weighted (int (*real) (const void *, const void *, size_t),
                  unsigned long weight, const unsigned char *a,
                  const unsigned char *b, size_t limit, bool strings)
{
  size_t read = 0;
  if (weight != 0 || real == NULL)
    read = compared_bytes (a, b, limit, strings);
  /* The C library's answer first, the counters after: their lines are
     scattered (the keys of a map) and often miss; last, their loads
     overlap with the work the caller goes on with.  */
  int result = real != NULL ? real (a, b, limit)
               : read == 0  ? 0
                            : (int) a[read - 1] - (int) b[read - 1];
  if (weight != 0)
    {
      count_range_times (a, read, weight);
      count_range_times (b, read, weight);
    }
  return result;
}

/* A comparison called by CALLER, counted when the call counts.  */
PLAIN static __attribute__ ((noinline)) int
compare (int (*real) (const void *, const void *, size_t), const void *caller,
         const unsigned char *a, const unsigned char *b, size_t limit,
         bool strings)
{
  return compare_weighted (real, counts_call (caller, false), a, b, limit,
                           strings);
}

/* strcmp and strncmp as compare_fn, for compare.  */
static int
real_strcmp_as_compare (const void *a, const void *b, size_t limit)
{
  (void) limit;
  return real_strcmp () (a, b);
}

static int
real_strncmp_as_compare (const void *a, const void *b, size_t limit)
{
  return real_strncmp () (a, b, limit);
}

/* memcmp when something may count, out of line (as copy_counted).  */
static __attribute__ ((noinline)) int
memcmp_counted (const void *a, const void *b, size_t size, const void *caller)
{
  return compare (real_memcmp (), caller, a, b, size, false);
}

INTERCEPT (NO_ATTRIBUTES, int, memcmp,
           (const void *a, const void *b, size_t size), (a, b, size),
           memcmp_counted (a, b, size, caller))

/* The weight a call from instrumented code counts with (0: nothing
   counted): the interposed functions' rule, for the __memprof_ entries
   below.  */
static inline __attribute__ ((always_inline)) unsigned long
plugin_call_weight (void)
{
  if (LIKELY (
          atomic_load_explicit (&instrumented_code_count, memory_order_relaxed)
              != 0
          && runtime_options.count_library_accesses))
    return library_access_weight ();
  return 0;
}

/* memcmp called from instrumented code (gcc-plugin/library_calls.cc: a
   call that stays a call of the C library's memcmp goes here instead).
   The caller is known not to be the runtime, so the range scan of
   counts_call is left out: a std::map keyed by strings makes tens of
   millions of these calls, and the way through memcmp's jump, its entry,
   the caller's verdict and the lookup of the C library's function was
   about half the cost of each.  What counts is what memcmp's interception
   counts for the same call (counts_call for a caller outside the
   runtime): nothing when the options or a sampled module's bursts say so
   (library_access_weight) or before any instrumented module has called
   __memprof_init; the bytes to the first difference otherwise.

   PROGRAM_MEMCMP is memcmp as the calling module binds it: this
   function's interposition when the program has no memcmp of its own;
   the program's own otherwise (or another preloaded library's), which is
   then called as the program would have called it, nothing counted here
   (the interception never ran for those calls either).  In an executable
   that is not position-independent it is the executable's PLT entry for
   memcmp, whose call reaches the interposed memcmp: a tail call (GCC
   makes one at -O2), so that the interposition sees the caller's return
   address and counts the call as before (memprof.dg/
   run-memcmp-counts-no-pie.c).  */
extern __typeof__ (memcmp) interposed_memcmp
    __attribute__ ((copy (memcmp), alias ("memcmp"), visibility ("hidden")));

PLAIN MEMPROF_EXPORT int
__memprof_memcmp (const void *a, const void *b, size_t size,
                  compare_fn program_memcmp)
{
  compare_fn real = known_memcmp ();
  if (UNLIKELY (program_memcmp != interposed_memcmp))
    return program_memcmp (a, b, size);
  if (UNLIKELY (real == NULL))
    return memcmp_counted (a, b, size, __builtin_return_address (0));
  unsigned long weight = plugin_call_weight ();
  if (weight == 0)
    return real (a, b, size);
  return compare_weighted (real, weight, a, b, size, false);
}

PLAIN static __attribute__ ((noinline)) void *
memchr_counted (const void *where, int value, size_t size, const void *caller)
{
  find_fn real = real_memchr ();
  void *result = NULL;
  if (real != NULL)
    result = real (where, value, size);
  else
    for (size_t i = 0; i < size && result == NULL; i++)
      if (((const unsigned char *) where)[i] == (unsigned char) value)
        result = (void *) ((const unsigned char *) where + i);
  if (counts_call (caller, false))
    count_range (
        where, result
                   ? (size_t) ((const char *) result - (const char *) where) + 1
                   : size);
  return result;
}

INTERCEPT (PLAIN, void *, memchr, (const void *where, int value, size_t size),
           (where, value, size), memchr_counted (where, value, size, caller))

static __attribute__ ((noinline)) size_t
strlen_counted (const char *text, const void *caller)
{
  length_fn real = real_strlen ();
  size_t length = real ? real (text) : plain_length (text, (size_t) -1);
  unsigned long weight = counts_call (caller, false);
  if (weight != 0)
    count_range_times (text, length + 1, weight);
  return length;
}

INTERCEPT (NO_ATTRIBUTES, size_t, strlen, (const char *text), (text),
           strlen_counted (text, caller))

/* strlen called from instrumented code, as __memprof_memcmp above.  */
extern __typeof__ (strlen) interposed_strlen
    __attribute__ ((copy (strlen), alias ("strlen"), visibility ("hidden")));

MEMPROF_EXPORT size_t
__memprof_strlen (const char *text, length_fn program_strlen)
{
  length_fn real = known_strlen ();
  if (UNLIKELY (program_strlen != interposed_strlen))
    return program_strlen (text);
  if (UNLIKELY (real == NULL))
    return strlen_counted (text, __builtin_return_address (0));
  size_t length = real (text);
  unsigned long weight = plugin_call_weight ();
  if (weight != 0)
    count_range_times (text, length + 1, weight);
  return length;
}

static __attribute__ ((noinline)) size_t
strnlen_counted (const char *text, size_t limit, const void *caller)
{
  bounded_length_fn real = real_strnlen ();
  size_t length = real ? real (text, limit) : plain_length (text, limit);
  if (counts_call (caller, false))
    count_range (text, length < limit ? length + 1 : limit);
  return length;
}

INTERCEPT (NO_ATTRIBUTES, size_t, strnlen, (const char *text, size_t limit),
           (text, limit), strnlen_counted (text, limit, caller))

static __attribute__ ((noinline)) int
strcmp_counted (const char *a, const char *b, const void *caller)
{
  return compare (real_strcmp () ? real_strcmp_as_compare : NULL, caller,
                  (const unsigned char *) a, (const unsigned char *) b,
                  (size_t) -1, true);
}

INTERCEPT (NO_ATTRIBUTES, int, strcmp, (const char *a, const char *b), (a, b),
           strcmp_counted (a, b, caller))

static __attribute__ ((noinline)) int
strncmp_counted (const char *a, const char *b, size_t limit, const void *caller)
{
  return compare (real_strncmp () ? real_strncmp_as_compare : NULL, caller,
                  (const unsigned char *) a, (const unsigned char *) b, limit,
                  true);
}

INTERCEPT (NO_ATTRIBUTES, int, strncmp,
           (const char *a, const char *b, size_t limit), (a, b, limit),
           strncmp_counted (a, b, limit, caller))

/* strcmp and strncmp called from instrumented code, as __memprof_memcmp
   above: the bytes to the first difference or NUL, included, at most
   LIMIT, found before the C library's function is called (its result is
   the program's) and counted after.  */
extern __typeof__ (strcmp) interposed_strcmp
    __attribute__ ((copy (strcmp), alias ("strcmp"), visibility ("hidden")));
extern __typeof__ (strncmp) interposed_strncmp
    __attribute__ ((copy (strncmp), alias ("strncmp"), visibility ("hidden")));

PLAIN MEMPROF_EXPORT int
__memprof_strcmp (const char *a, const char *b,
                  string_compare_fn program_strcmp)
{
  string_compare_fn real = known_strcmp ();
  if (UNLIKELY (program_strcmp != interposed_strcmp))
    return program_strcmp (a, b);
  if (UNLIKELY (real == NULL))
    return strcmp_counted (a, b, __builtin_return_address (0));
  unsigned long weight = plugin_call_weight ();
  if (weight == 0)
    return real (a, b);
  size_t read = compared_bytes ((const unsigned char *) a,
                                (const unsigned char *) b, (size_t) -1, true);
  int result = real (a, b);
  count_range_times (a, read, weight);
  count_range_times (b, read, weight);
  return result;
}

PLAIN MEMPROF_EXPORT int
__memprof_strncmp (const char *a, const char *b, size_t limit,
                   bounded_string_compare_fn program_strncmp)
{
  bounded_string_compare_fn real = known_strncmp ();
  if (UNLIKELY (program_strncmp != interposed_strncmp))
    return program_strncmp (a, b, limit);
  if (UNLIKELY (real == NULL))
    return strncmp_counted (a, b, limit, __builtin_return_address (0));
  unsigned long weight = plugin_call_weight ();
  if (weight == 0)
    return real (a, b, limit);
  size_t read = compared_bytes ((const unsigned char *) a,
                                (const unsigned char *) b, limit, true);
  int result = real (a, b, limit);
  count_range_times (a, read, weight);
  count_range_times (b, read, weight);
  return result;
}

/* strcpy and stpcpy when something may count: the string FROM copied
   to TO (the bytes counted), its end in TO returned.  STPCPY: the
   function to look up.  */
static __attribute__ ((noinline)) char *
copy_string_counted (char *to, const char *from, const void *caller,
                     bool stpcpy)
{
  (void) (stpcpy ? (void *) real_stpcpy () : (void *) real_strcpy ());
  size_t size = length_of (from) + 1;
  copy (real_memcpy (), to, from, size);
  count_two_ranges (caller, false, to, from, size);
  return to + size - 1;
}

INTERCEPT (NO_ATTRIBUTES, char *, strcpy, (char *to, const char *from),
           (to, from), (copy_string_counted (to, from, caller, false), to))

INTERCEPT (NO_ATTRIBUTES, char *, stpcpy, (char *to, const char *from),
           (to, from), copy_string_counted (to, from, caller, true))

static __attribute__ ((noinline)) char *
strcat_counted (char *to, const char *from, const void *caller)
{
  (void) real_strcat ();
  size_t at = length_of (to), size = length_of (from) + 1;
  copy (real_memcpy (), to + at, from, size);
  if (counts_call (caller, false))
    {
      count_range (to, at + size);
      count_range (from, size);
    }
  return to;
}

INTERCEPT (NO_ATTRIBUTES, char *, strcat, (char *to, const char *from),
           (to, from), strcat_counted (to, from, caller))

PLAIN static __attribute__ ((noinline)) char *
strchr_counted (const char *text, int value, const void *caller)
{
  (void) real_strchr ();
  size_t length = length_of (text);
  const char *found = NULL;
  if ((char) value == '\0')
    found = text + length;
  else
    {
      find_fn real = real_memchr ();
      found = real ? real (text, value, length) : NULL;
      for (size_t i = 0; real == NULL && i < length && found == NULL; i++)
        if (text[i] == (char) value)
          found = text + i;
    }
  if (counts_call (caller, false))
    count_range (text, found ? (size_t) (found - text) + 1 : length + 1);
  return (char *) found;
}

INTERCEPT (PLAIN, char *, strchr, (const char *text, int value), (text, value),
           strchr_counted (text, value, caller))

PLAIN static __attribute__ ((noinline)) char *
strrchr_counted (const char *text, int value, const void *caller)
{
  (void) real_strrchr ();
  size_t length = length_of (text);
  const char *found = NULL;
  for (size_t i = 0; i <= length; i++)
    if (text[i] == (char) value)
      found = text + i;
  if (counts_call (caller, false))
    count_range (text, length + 1);
  return (char *) found;
}

INTERCEPT (PLAIN, char *, strrchr, (const char *text, int value), (text, value),
           strrchr_counted (text, value, caller))

/* Something may count from now on (a module was noted, an option set):
   every exported function goes through its NAME_entry again.  */
void
interceptors_recheck (void)
{
  atomic_fetch_add (&recheck_generation, 1);
#define RECHECK(name) atomic_store (&name##_target, name##_entry)
  RECHECK (memcpy);
  RECHECK (memmove);
  RECHECK (mempcpy);
  RECHECK (memset);
  RECHECK (memcmp);
  RECHECK (memchr);
  RECHECK (strlen);
  RECHECK (strnlen);
  RECHECK (strcmp);
  RECHECK (strncmp);
  RECHECK (strcpy);
  RECHECK (stpcpy);
  RECHECK (strcat);
  RECHECK (strchr);
  RECHECK (strrchr);
#undef RECHECK
}
