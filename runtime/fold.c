/* Recursion folding (fold_recursion=1, the default): a captured call
   stack in which one function has two frames has gone round a cycle of
   calls -- direct recursion (f calls f) or indirect (f calls g calls f).
   The cycle is folded: each function keeps one frame, so a recursive
   builder or parser gives a bounded number of contexts instead of one per
   path through the recursion (binary trees: 2^depth, more when GCC
   inlines the recursion into itself and so multiplies its call sites).

   The stack is walked from its root.  When a frame's function already
   has a frame in what is kept, what is kept is cut back to that frame,
   which takes the newer (inner) frame's return address: the chain stays
   one a program can run (the caller kept before calls the function; the
   function at the inner address calls the next frame).  The reserved
   address MEMPROF_RAW_FOLD_PC is put in front of the folded frame, once,
   so the fold shows in our own tools ("[recursion folded]");
   llvm-profdata cannot symbolize it and drops it as any address outside
   the binary.  The leaf (the allocation call) is always kept.

   A frame's function is the start of the code that covers its address in
   the unwind tables (libunwind's procedure info), looked up once per
   return address and kept in a lock-free cache; code without unwind
   information counts as one function per return address.  */

#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "internal.h"
#include "rawformat.h"

/* Return addresses whose function is cached (a power of two); a full
   cache only means more lookups.  An entry is the address in its low
   CACHE_ADDRESS_BITS and the distance from its function's start above.  */
#define FUNCTION_CACHE_SIZE (1U << 16)
#define FUNCTION_CACHE_PROBES 8
#define CACHE_ADDRESS_BITS 47
#define CACHE_DISTANCE_MAX ((1ULL << (64 - CACHE_ADDRESS_BITS)) - 1)

static _Atomic uint64_t *_Atomic function_cache;

static _Atomic uint64_t *
cache_table (void)
{
  _Atomic uint64_t *table
      = atomic_load_explicit (&function_cache, memory_order_acquire);
  if (table == NULL)
    {
      _Atomic uint64_t *fresh
          = runtime_map (FUNCTION_CACHE_SIZE * sizeof *fresh);
      if (fresh == NULL)
        return NULL;
      if (atomic_compare_exchange_strong (&function_cache, &table, fresh))
        table = fresh;
      else
        runtime_unmap ((void *) fresh, FUNCTION_CACHE_SIZE * sizeof *fresh);
    }
  return table;
}

static uintptr_t
function_from_unwind_tables (uintptr_t pc)
{
  unw_proc_info_t info;
  if (unw_get_proc_info_by_ip (unw_local_addr_space, pc, &info, NULL) == 0
      && info.start_ip != 0 && info.start_ip <= pc)
    return info.start_ip;
  return pc;
}

/* The start of the function PC (a return address - 1) is in.  */
static uintptr_t
function_of (uintptr_t pc)
{
  _Atomic uint64_t *table = cache_table ();
  unsigned slot = (unsigned) ((pc * 0x9e3779b97f4a7c15ULL) >> 48);
  uintptr_t start;

  if (table == NULL || pc >> CACHE_ADDRESS_BITS != 0)
    return function_from_unwind_tables (pc);
  for (int probe = 0; probe < FUNCTION_CACHE_PROBES; probe++)
    {
      _Atomic uint64_t *entry
          = &table[(slot + probe) & (FUNCTION_CACHE_SIZE - 1)];
      uint64_t seen = atomic_load_explicit (entry, memory_order_relaxed);
      if (seen == 0)
        {
          start = function_from_unwind_tables (pc);
          if (pc - start <= CACHE_DISTANCE_MAX)
            atomic_compare_exchange_strong (
                entry, &seen,
                pc | (uint64_t) (pc - start) << CACHE_ADDRESS_BITS);
          return start;
        }
      if ((seen & ((1ULL << CACHE_ADDRESS_BITS) - 1)) == pc)
        return pc - (uintptr_t) (seen >> CACHE_ADDRESS_BITS);
    }
  return function_from_unwind_tables (pc);
}

/* Bits of the filter of functions seen (a multiple of 64).  */
#define SEEN_BITS 256

static inline unsigned
seen_bit (uintptr_t function)
{
  return (unsigned) ((function * 0x9e3779b97f4a7c15ULL) >> 56)
         & (SEEN_BITS - 1);
}

/* Is any function of FUNCTIONS[0, DEPTH) there twice?  */
static bool
has_repeated_function (const uintptr_t *functions, int depth)
{
  uint64_t seen[SEEN_BITS / 64] = { 0 };

  for (int i = 0; i < depth; i++)
    {
      unsigned bit = seen_bit (functions[i]);
      if (seen[bit / 64] & (1ULL << (bit % 64)))
        for (int j = 0; j < i; j++)
          if (functions[j] == functions[i])
            return true;
      seen[bit / 64] |= 1ULL << (bit % 64);
    }
  return false;
}

int
stack_fold_recursion (uintptr_t *pcs, int depth)
{
  uintptr_t functions[STACK_CAPTURE_MAX];
  /* What is kept, root first; a marker's function is 0.  */
  uintptr_t kept[STACK_CAPTURE_MAX], kept_function[STACK_CAPTURE_MAX];
  int count = 0;

  if (depth > STACK_CAPTURE_MAX)
    return depth;
  for (int i = 0; i < depth; i++)
    functions[i] = function_of (pcs[i]);
  if (!has_repeated_function (functions, depth))
    return depth;
  for (int i = depth - 1; i >= 0; i--)
    {
      int at = count;
      while (at-- > 0)
        if (kept_function[at] == functions[i])
          break;
      if (at < 0)
        at = count;
      else if (at == 0 || kept[at - 1] != MEMPROF_RAW_FOLD_PC)
        {
          kept[at] = MEMPROF_RAW_FOLD_PC;
          kept_function[at] = 0;
          at++;
        }
      kept[at] = pcs[i];
      kept_function[at] = functions[i];
      count = at + 1;
    }
  for (int i = 0; i < count; i++)
    pcs[i] = kept[count - 1 - i];
  return count;
}
