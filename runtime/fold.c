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
   return address and kept in a pc_map; code without unwind
   information counts as one function per return address.  */

#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "internal.h"
#include "rawformat.h"

/* The start of each return address's function, + 1 (0 is "none").  */
static struct pc_map function_starts;

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
  uint64_t cached = pc_map_get (&function_starts, pc);
  if (cached != 0)
    return (uintptr_t) cached - 1;
  uintptr_t start = function_from_unwind_tables (pc);
  pc_map_set (&function_starts, pc, (uint64_t) start + 1);
  return start;
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
