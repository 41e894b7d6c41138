/* Exact allocation contexts at every -O level: no sibling call where an
   allocation's context would lose a frame.

   At -O2, `void *xmalloc (size_t n) { return malloc (n); }` ends with a
   jump to malloc, and a caller's `return xmalloc (n);` with a jump to
   xmalloc: neither frame is on the stack when malloc runs, so the
   runtime charges the allocation to whoever called the caller.  GCC's
   "tailc" pass (pass_tail_calls, late in pass_all_optimizations) marks
   such calls with gimple_call_tail_p; the expander (cfgexpand.cc,
   expand_call_stmt -> CALL_EXPR_TAILCALL) then emits a sibling call only
   for a call so marked.  The instrumentation pass runs after "asan0",
   that is after "tailc" and before "expand", so clearing the mark there
   turns exactly those calls back into ordinary calls, with no
   -fno-optimize-sibling-calls from the user and nothing else changed:
   the other tail calls of the program, tail recursion turned into loops
   ("tailr") and every other optimisation stay as they are.

   A call keeps its frame when it may allocate: its result is a pointer
   (malloc, realloc, operator new, strdup, and any wrapper that returns
   what an allocation returned, whatever unit defines it), the callee has
   GCC's malloc attribute, or it is one of the allocation functions
   feedback knows (posix_memalign returns an int).  The module
   constructor's call of __memprof_init keeps its frame too: the runtime
   names the module by that call's return address.  A call GCC must emit
   as a tail call (gimple_call_must_tail_p) is left alone.  */

#include "gcc-plugin.h"

#include "tree.h"
#include "function.h"
#include "basic-block.h"
#include "gimple.h"
#include "gimple-iterator.h"

#include "memprof/abi.h"
#include "../formats/feedback.h"
#include "feedback-internal.h"
#include "sibcalls.h"

/* Whether CALL may allocate, or return what an allocation returned, or
   is the init call whose return address names the module.  */
static bool
call_may_allocate (gcall *call)
{
  tree fndecl = gimple_call_fndecl (call);
  if (POINTER_TYPE_P (gimple_call_return_type (call)))
    return true;
  if (fndecl != NULL_TREE && DECL_NAME (fndecl) != NULL_TREE
      && strcmp (IDENTIFIER_POINTER (DECL_NAME (fndecl)), MEMPROF_INIT_NAME)
             == 0)
    return true;
  if (fndecl != NULL_TREE && DECL_IS_MALLOC (fndecl))
    return true;
  return allocation_function (call) >= 0;
}

/* See sibcalls.h.  */
unsigned
keep_allocation_frames (void)
{
  unsigned kept = 0;
  basic_block bb;

  FOR_EACH_BB_FN (bb, cfun)
  {
    for (gimple_stmt_iterator gsi = gsi_start_bb (bb); !gsi_end_p (gsi);
         gsi_next (&gsi))
      {
        gcall *call = dyn_cast<gcall *> (gsi_stmt (gsi));
        if (call != NULL && gimple_call_tail_p (call)
            && !gimple_call_must_tail_p (call) && call_may_allocate (call))
          {
            gimple_call_set_tail (call, false);
            kept++;
          }
      }
  }
  return kept;
}
