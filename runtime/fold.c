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
   the unwind tables (stack_function_of: libunwind's procedure info,
   learnt once per return address); code without unwind information
   counts as one function per return address.  */

#include "internal.h"
#include "rawformat.h"

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
stack_fold_recursion (uintptr_t *pcs, uintptr_t *functions, int depth)
{
  /* What is kept, root first; a marker's function is 0.  */
  uintptr_t kept[STACK_CAPTURE_MAX], kept_function[STACK_CAPTURE_MAX];
  int count = 0;

  if (depth > STACK_CAPTURE_MAX)
    return depth;
  for (int i = 0; i < depth; i++)
    if (functions[i] == 0)
      functions[i] = stack_function_of (pcs[i]);
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
