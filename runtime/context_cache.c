/* The thread's context cache: from the return addresses of an
   allocation's stack, as the unwinder captured them, straight to its
   depot context, without folding the recursion and hashing the folded
   stack into the depot again.  The context is a function of the captured
   return addresses alone (folding and the cut to max_stack_depth depend
   on nothing else, and depot records are never freed or moved; the
   cache is emptied when a module's code is forgotten, code_forgotten), so a
   cached context is the one depot_intern would give: the key is the
   whole captured stack, compared frame by frame, never a hash alone.

   Two-way set associative, 2 x CONTEXT_CACHE_SETS entries a thread (a
   miss replaces the way not used last), each a stack of
   at most CONTEXT_CACHE_FRAMES return addresses (deeper stacks take the
   depot's way every time).  No locks: only the thread reads and writes
   its own cache.

   verify_contexts=1 checks every context, cached or not, against the one
   a full unwind with libunwind gives, counts the checks and the
   differences, and keeps the full unwind's context where they differ:
   the test that cached contexts equal full unwinds.  */

#include "internal.h"

#define CONTEXT_CACHE_SETS 32 /* 2^5: the hash's top 5 bits; two ways */
#define CONTEXT_CACHE_FRAMES 32

struct cached_context
{
  uint64_t hash;
  struct depot_context *context; /* NULL: empty */
  uint32_t count;
  int32_t max;
  uintptr_t frames[CONTEXT_CACHE_FRAMES];
};

static __thread struct cached_context context_cache[CONTEXT_CACHE_SETS][2]
    __attribute__ ((tls_model ("initial-exec")));
/* code_forgotten when the thread's cache was last emptied: a cached
   context is a function of the return addresses only while no module
   was unloaded without its span reserved (internal.h).  */
static __thread uint32_t context_cache_forgotten
    __attribute__ ((tls_model ("initial-exec")));
/* Per set, the way not used last: the next one a miss replaces.  */
static __thread uint8_t context_cache_victim[CONTEXT_CACHE_SETS]
    __attribute__ ((tls_model ("initial-exec")));

static _Atomic uint64_t cache_hits, cache_misses;
static _Atomic uint64_t verified, verify_differed;

static inline uint64_t
hash_frames (const uintptr_t *frames, int count)
{
  /* Two cycles a frame (a multiply a frame made this a tenth of the
     allocation's cost): the frames are compared anyway, the hash only
     spreads the stacks over the slots.  */
  uint64_t hash = (uint64_t) count;
  for (int i = 0; i < count; i++)
    hash = ((hash << 7) | (hash >> 57)) ^ frames[i];
  return hash * 0x9e3779b97f4a7c15ULL;
}

static inline bool
same_frames (const uintptr_t *a, const uintptr_t *b, int count)
{
  for (int i = 0; i < count; i++)
    if (a[i] != b[i])
      return false;
  return true;
}

/* The context of WHOLE[0, COUNT) (changed in place), cut to MAX.  */
static struct depot_context *
intern_captured (uintptr_t *whole, uintptr_t *functions, int count, int max)
{
  uintptr_t pcs[STACK_CAPTURE_MAX];
  int depth = stack_finish (pcs, max, whole, functions, count);
  return depot_intern (pcs, (uint32_t) depth);
}

/* The context of WHOLE[0, COUNT) cut to MAX: through the fold memo when
   recursion is folded (WHOLE unchanged), as intern_captured gives it.  */
static struct depot_context *
context_of_captured (uintptr_t *whole, uintptr_t *functions, int count, int max)
{
  struct depot_context *context = NULL;
  if (runtime_options.fold_recursion)
    context = fold_memo_context (whole, functions, count, max);
  if (context == NULL)
    context = intern_captured (whole, functions, count, max);
  return context;
}

/* verify_contexts: is CONTEXT the one a full unwind gives?  Returns the
   full unwind's.  */
static __attribute__ ((noinline)) struct depot_context *
verify_context (struct depot_context *context, int max, uintptr_t caller_return)
{
  uintptr_t whole[STACK_CAPTURE_MAX], functions[STACK_CAPTURE_MAX];
  int count = stack_capture_full (whole, functions, caller_return);
  struct depot_context *full = intern_captured (whole, functions, count, max);

  atomic_fetch_add_explicit (&verified, 1, memory_order_relaxed);
  if (full == context)
    return context;
  if (atomic_fetch_add_explicit (&verify_differed, 1, memory_order_relaxed) < 5)
    {
      uint32_t same = 0;
      while (same < full->depth && same < context->depth
             && full->pcs[same] == context->pcs[same])
        same++;
      log_printf ("verify_contexts: an allocation's context (%u frames) is "
                  "not the full unwind's (%u frames): frame %u differs, "
                  "%#lx against %#lx; the full unwind's is kept",
                  context->depth, full->depth, same,
                  same < context->depth ? (unsigned long) context->pcs[same]
                                        : 0UL,
                  same < full->depth ? (unsigned long) full->pcs[same] : 0UL);
    }
  return full;
}

/* context_capture by the whole raw stack: captured, then through the
   fold memo or the raw-stack cache.  */
static __attribute__ ((noinline)) struct depot_context *
context_of_raw_stack (int max, uintptr_t caller_return)
{
  uintptr_t whole[STACK_CAPTURE_MAX], functions[STACK_CAPTURE_MAX];
  struct depot_context *context = NULL;
  int count = stack_capture_raw (whole, functions, caller_return);

  /* With fold_recursion the fold memo is the thread's first cache: it
     hits on recursive code, whose raw stacks rarely repeat.  */
  if (runtime_options.fold_recursion && LIKELY (runtime_options.verbosity == 0))
    context = fold_memo_context (whole, functions, count, max);
  else if (runtime_options.fold_recursion)
    {
      uint64_t misses = fold_memo_thread_misses ();
      context = fold_memo_context (whole, functions, count, max);
      if (context != NULL)
        /* A hit: nothing to learn, as a hit of the raw-stack cache.  */
        atomic_fetch_add_explicit (
            fold_memo_thread_misses () == misses ? &cache_hits : &cache_misses,
            1, memory_order_relaxed);
    }
  if (context != NULL)
    ;
  else if (count <= CONTEXT_CACHE_FRAMES)
    {
      uint32_t forgotten
          = atomic_load_explicit (&code_forgotten, memory_order_acquire);
      if (UNLIKELY (forgotten != context_cache_forgotten))
        {
          memset (context_cache, 0, sizeof context_cache);
          context_cache_forgotten = forgotten;
        }
      uint64_t hash = hash_frames (whole, count);
      unsigned set = (unsigned) (hash >> 59), way;
      struct cached_context *entry = NULL;
      for (way = 0; way < 2 && entry == NULL; way++)
        {
          struct cached_context *candidate = &context_cache[set][way];
          if (candidate->context != NULL && candidate->hash == hash
              && candidate->count == (uint32_t) count && candidate->max == max
              && same_frames (candidate->frames, whole, count))
            entry = candidate;
        }
      if (entry != NULL)
        {
          /* WAY is one past the way that hit.  */
          context_cache_victim[set] = (uint8_t) (way & 1);
          context = entry->context;
          if (UNLIKELY (runtime_options.verbosity >= 1))
            atomic_fetch_add_explicit (&cache_hits, 1, memory_order_relaxed);
        }
      else
        {
          way = context_cache_victim[set];
          context_cache_victim[set] = (uint8_t) (way ^ 1);
          entry = &context_cache[set][way];
          entry->context = NULL;
          entry->hash = hash;
          entry->count = (uint32_t) count;
          entry->max = max;
          memcpy (entry->frames, whole, count * sizeof *whole);
          context = context_of_captured (whole, functions, count, max);
          entry->context = context;
          if (UNLIKELY (runtime_options.verbosity >= 1))
            atomic_fetch_add_explicit (&cache_misses, 1, memory_order_relaxed);
        }
    }
  else
    context = context_of_captured (whole, functions, count, max);
  if (UNLIKELY (runtime_options.verify_contexts))
    context = verify_context (context, max, caller_return);
  return context;
}

/* context_capture with verbosity or verify_contexts.  */
static __attribute__ ((noinline)) struct depot_context *
context_capture_counted (int max, uintptr_t caller_return)
{
  /* With fold_recursion, a short stack is walked and folded in one pass
     from the thread's last walk (stack.c, "The last folded walk").  */
  if (runtime_options.fold_recursion && stack_last_depth < STACK_CAPTURE_MAX)
    {
      uint64_t misses = fold_memo_thread_misses ();
      struct depot_context *context = stack_capture_folded (max, caller_return);
      if (context != NULL)
        {
          if (runtime_options.verbosity >= 1)
            atomic_fetch_add_explicit (fold_memo_thread_misses () == misses
                                           ? &cache_hits
                                           : &cache_misses,
                                       1, memory_order_relaxed);
          if (runtime_options.verify_contexts)
            context = verify_context (context, max, caller_return);
          return context;
        }
    }
  return context_of_raw_stack (max, caller_return);
}

struct depot_context *
context_capture_other (int max, uintptr_t caller_return)
{
  /* context_capture's folded walk gave nothing (or the stack was too
     deep for it): the raw stack's way.  */
  if (LIKELY (runtime_options.fold_recursion && runtime_options.verbosity == 0
              && !runtime_options.verify_contexts))
    return context_of_raw_stack (max, caller_return);
  return context_capture_counted (max, caller_return);
}

void
context_cache_report (void)
{
  if (runtime_options.verbosity >= 1)
    log_printf ("context cache: %lu hits, %lu misses",
                (unsigned long) cache_hits, (unsigned long) cache_misses);
  if (runtime_options.verify_contexts)
    log_printf ("verify_contexts: %lu contexts checked against a full "
                "unwind, %lu differed",
                (unsigned long) verified, (unsigned long) verify_differed);
}
