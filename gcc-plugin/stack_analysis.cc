/* The stack analysis: which memory accesses provably touch only the
   current thread's stack, so that the instrumentation may skip them.

   A heap profiler counts accesses to heap blocks.  Memory that is on the
   stack of the running function can never be a heap block while the
   function runs, so an access the analysis proves to be there is not
   instrumented: the heap profile stays exactly the same, and the program
   runs faster.  Skipping is the only thing a verdict can cause, so every
   rule must be sound: when in doubt, the answer is "not proven" and the
   access is counted.  testsuite/soundness checks the consequence (heap
   profiles identical with the analysis on and off, at every -O level).

   The rules, at stack-analysis=full (the default):

   1. Local storage.  The reference's base object is an automatic
      variable, a parameter, or the result slot of this function
      (decl_is_frame_storage).  Sound: such a decl lives in this frame.
      Excluded: a result returned in memory, and a parameter passed by
      invisible reference, whose storage is the caller's and may be a heap
      block (`new Big (make_big ())' with the return-slot optimisation).

   2. alloca.  The pointer is the result of alloca or of a VLA's
      allocation (__builtin_alloca_with_align).  Sound: that memory is
      carved from this frame.

   3. Pointer chains.  The pointer is an SSA name whose every definition
      leads, through copies, conversions, pointer arithmetic, PHIs,
      conditionals, and calls that return an argument (memcpy...), to rule
      1 or 2 (pointer_proof, address_proof).  An integer turned back into
      a pointer is followed when it is a stack pointer plus or minus
      offsets made only of constants (integer_proof, is_pure_offset):
      GCC's induction-variable optimisation writes pointer loops that way.
      Sound: pointer arithmetic from an object stays in that object by
      the language's rules (and one past it in a loop test is never
      dereferenced); a PHI or a conditional is stack only when all of its
      inputs are.  Anything else -- a load from memory, an incoming
      parameter, a call's result, an integer of unknown origin -- is not
      proven.  Walks stop at POINTER_WALK_DEPTH definitions.

   4. Points-to.  GCC's points-to solution for the pointer (computed at
      -O1 and above) names only this frame's variables: no "anything", no
      nonlocal or escaped memory, no heap variable (GCC's heap objects are
      artificial variables that are never frame decls), nothing global.
      Sound as GCC's alias analysis is: its optimisers rely on the same
      sets.

   Where several origins of a pointer meet (a PHI, a conditional, a call
   argument, a returned value), a null pointer constant spoils no proof
   (origin_proof): it is no heap memory, and C makes arithmetic on it
   undefined.

   Across frames (at -O1 and above, unless other-frames=0):

   5. Callers' frames.  The chain reaches the incoming value of a pointer
      parameter that stack_params.cc proved: the function's callers are
      all known (static or made local by -flto; not address-taken,
      exported, aliased or noipa) and every call passes an argument these
      rules prove stack in the caller -- a fixed point over the call graph,
      recursion included.  Or the chain reaches the result of a call to a
      function proven, the same way, to return only such addresses.
      Sound: a caller's frame outlives its callee's, and by induction on
      the call stack every value that reaches a proven parameter was
      derived from an address in a live frame.

   6. Points-to, other frames.  GCC's points-to set names only automatic
      variables of any function of the unit (-fipa-pta computes such sets
      for pointers into callers' frames).  Sound: an automatic variable is
      never heap memory while it lives, and a pointer to one after its
      frame died still points into the stack.

   Rules 1 to 6 assume that stacks are not heap blocks.  Code that runs on
   stacks it allocated itself (makecontext fibers, coroutine stacks) breaks
   that: its frames are in a heap block.  other-frames=0 turns rules 5 and
   6 off (accesses through pointers a fiber passes down are counted);
   stack-analysis=none counts every access, the fiber's own locals too.

   stack-analysis=basic applies rules 1 and 2 only to the reference
   itself (no chains, no points-to); stack-analysis=none proves nothing.

   What it gives up: a parameter of a function whose callers are not all
   known (exported without -flto, address-taken, called through a
   pointer), and at -O0 every parameter (it lives in memory there); a
   stack pointer stored to memory and loaded back, unless GCC's points-to
   set of the loaded pointer (rules 4 and 6) says where it points.  */

#include "gcc-plugin.h"

#include "tree.h"
#include "function.h"
#include "basic-block.h"
#include "gimple.h"
#include "ssa.h"
#include "tree-ssa-alias.h"
#include "calls.h"
#include "bitmap.h"
#include "hash-set.h"

#include "plugin.h"
#include "stack_analysis.h"
#include "stack_params.h"

/* The bound on pointer-chain walks (LLVM's getUnderlyingObject uses 6).  */
#define POINTER_WALK_DEPTH 32

/* Is DECL storage of the current frame?  An automatic variable, a
   parameter, or the result slot -- unless the result is returned in
   memory, whose storage is the caller's (possibly heap).  */
static bool
decl_is_frame_storage (tree decl)
{
  /* A result returned in memory is written where the caller says: with
     the return-slot optimisation that may be a heap block
     (`new Big (make_big ())').  */
  if (TREE_CODE (decl) == RESULT_DECL
      && (DECL_BY_REFERENCE (decl)
          || aggregate_value_p (decl, TREE_TYPE (current_function_decl))))
    return false;
  if (TREE_CODE (decl) == PARM_DECL && DECL_BY_REFERENCE (decl))
    return false;
  return auto_var_in_fn_p (decl, current_function_decl);
}

static enum verdict pointer_proof (tree pointer, hash_set<tree> *visited,
                                   int depth);
static enum verdict integer_proof (tree value, hash_set<tree> *visited,
                                   int depth);

/* What an address expression ADDRESS (the operand of a MEM_REF, or a
   pointer value) is known to point into.  */
static enum verdict
address_proof (tree address, hash_set<tree> *visited, int depth)
{
  STRIP_NOPS (address);
  if (TREE_CODE (address) == ADDR_EXPR)
    {
      tree base = get_base_address (TREE_OPERAND (address, 0));
      if (base == NULL_TREE)
        return INSTRUMENT;
      if (DECL_P (base))
        return decl_is_frame_storage (base) ? SKIP_LOCAL_VARIABLE : INSTRUMENT;
      if (TREE_CODE (base) == MEM_REF || TREE_CODE (base) == TARGET_MEM_REF)
        return address_proof (TREE_OPERAND (base, 0), visited, depth);
      return INSTRUMENT;
    }
  if (TREE_CODE (address) == SSA_NAME)
    return pointer_proof (address, visited, depth);
  return INSTRUMENT;
}

/* What VALUE, one origin of a pointer where several meet (a PHI, a
   conditional, an argument, a returned value), is known to point into.  A
   null pointer constant is no heap memory and spoils no proof: C makes
   arithmetic on it undefined, and dereferencing it never reaches a heap
   block.  */
static enum verdict
origin_proof (tree value, hash_set<tree> *visited, int depth)
{
  if (integer_zerop (value))
    return SKIP_LOCAL_VARIABLE;
  return address_proof (value, visited, depth);
}

/* Combine the proofs of two origins of one pointer: stack only when both
   are; the reason reported is the weaker one.  */
static enum verdict
both_stack (enum verdict a, enum verdict b)
{
  if (a == INSTRUMENT || b == INSTRUMENT)
    return INSTRUMENT;
  return a == SKIP_LOCAL_VARIABLE && b == SKIP_LOCAL_VARIABLE
             ? SKIP_POINTER_TO_STACK
             : (a > b ? a : b);
}

/* Follow the definitions of the SSA pointer POINTER: it is stack when
   every definition leads, through copies, conversions, pointer
   arithmetic, PHIs and conditionals, to the address of frame storage or
   to an alloca.  Anything else -- a load, an integer, an incoming value,
   a call -- is unknown, hence not stack.  */
static enum verdict
pointer_proof (tree pointer, hash_set<tree> *visited, int depth)
{
  gimple *def;

  if (TREE_CODE (pointer) != SSA_NAME || !POINTER_TYPE_P (TREE_TYPE (pointer))
      || depth > POINTER_WALK_DEPTH)
    return INSTRUMENT;
  /* A name met again on a PHI cycle adds no new origin.  */
  if (visited->add (pointer))
    return SKIP_POINTER_TO_STACK;
  /* The incoming value of a parameter: stack when every call passes an
     address in the callers' frames (stack_params.cc).  */
  if (SSA_NAME_IS_DEFAULT_DEF (pointer))
    return SSA_NAME_VAR (pointer) != NULL_TREE
                   && parameter_is_callers_frame (SSA_NAME_VAR (pointer))
               ? SKIP_CALLERS_FRAMES
               : INSTRUMENT;
  def = SSA_NAME_DEF_STMT (pointer);

  if (gphi *phi = dyn_cast<gphi *> (def))
    {
      enum verdict result = SKIP_POINTER_TO_STACK;
      if (gimple_phi_num_args (phi) == 0)
        return INSTRUMENT;
      for (unsigned i = 0; i < gimple_phi_num_args (phi); i++)
        {
          result
              = both_stack (result, origin_proof (gimple_phi_arg_def (phi, i),
                                                  visited, depth + 1));
          if (result == INSTRUMENT)
            return INSTRUMENT;
        }
      return SKIP_POINTER_TO_STACK;
    }
  if (is_gimple_call (def))
    {
      if (gimple_alloca_call_p (def))
        return depth == 0 ? SKIP_ALLOCA : SKIP_POINTER_TO_STACK;
      /* memcpy and the like return their first argument.  */
      int flags = gimple_call_return_flags (as_a<gcall *> (def));
      if (flags & ERF_RETURNS_ARG)
        {
          unsigned index = flags & ERF_RETURN_ARG_MASK;
          if (index < gimple_call_num_args (def))
            return both_stack (SKIP_POINTER_TO_STACK,
                               address_proof (gimple_call_arg (def, index),
                                              visited, depth + 1));
        }
      /* A function of this unit that returns only stack addresses
         (stack_params.cc).  */
      tree callee = gimple_call_fndecl (def);
      if (callee != NULL_TREE && function_returns_stack (callee))
        return SKIP_CALLERS_FRAMES;
      return INSTRUMENT;
    }
  if (!is_gimple_assign (def))
    return INSTRUMENT;
  switch (gimple_assign_rhs_code (def))
    {
    case POINTER_PLUS_EXPR:
    case SSA_NAME:
    case ADDR_EXPR:
    CASE_CONVERT:
      {
        tree source = gimple_assign_rhs1 (def);
        /* An integer turned back into a pointer: GCC's induction-variable
           optimisation writes pointer loops this way.  */
        if (INTEGRAL_TYPE_P (TREE_TYPE (source)))
          return both_stack (SKIP_POINTER_TO_STACK,
                             integer_proof (source, visited, depth + 1));
        if (!POINTER_TYPE_P (TREE_TYPE (source)))
          return INSTRUMENT;
        return both_stack (SKIP_POINTER_TO_STACK,
                           address_proof (source, visited, depth + 1));
      }
    case COND_EXPR:
      return both_stack (
          origin_proof (gimple_assign_rhs2 (def), visited, depth + 1),
          origin_proof (gimple_assign_rhs3 (def), visited, depth + 1));
    default:
      return INSTRUMENT;
    }
}

/* Is the integer VALUE free of any pointer: made only of constants and
   arithmetic on them (induction-variable PHIs included)?  A loaded
   value, a parameter or a call's result might hold a pointer difference,
   so it is not.  */
static bool
is_pure_offset (tree value, hash_set<tree> *visited, int depth)
{
  gimple *def;

  if (TREE_CODE (value) == INTEGER_CST)
    return true;
  if (TREE_CODE (value) != SSA_NAME || !INTEGRAL_TYPE_P (TREE_TYPE (value))
      || depth > POINTER_WALK_DEPTH || SSA_NAME_IS_DEFAULT_DEF (value))
    return false;
  if (visited->add (value))
    return true; /* a cycle adds no new origin */
  def = SSA_NAME_DEF_STMT (value);
  if (gphi *phi = dyn_cast<gphi *> (def))
    {
      for (unsigned i = 0; i < gimple_phi_num_args (phi); i++)
        if (!is_pure_offset (gimple_phi_arg_def (phi, i), visited, depth + 1))
          return false;
      return gimple_phi_num_args (phi) > 0;
    }
  if (!is_gimple_assign (def))
    return false;
  switch (gimple_assign_rhs_code (def))
    {
    CASE_CONVERT:
    case SSA_NAME:
    case NEGATE_EXPR:
      return INTEGRAL_TYPE_P (TREE_TYPE (gimple_assign_rhs1 (def)))
             && is_pure_offset (gimple_assign_rhs1 (def), visited, depth + 1);
    case PLUS_EXPR:
    case MINUS_EXPR:
    case MULT_EXPR:
    case LSHIFT_EXPR:
    case RSHIFT_EXPR:
    case BIT_AND_EXPR:
    case MIN_EXPR:
    case MAX_EXPR:
      return is_pure_offset (gimple_assign_rhs1 (def), visited, depth + 1)
             && is_pure_offset (gimple_assign_rhs2 (def), visited, depth + 1);
    default:
      return false;
    }
}

/* VALUE, an integer that is turned into a pointer: stack when it is a
   stack pointer converted to an integer, plus or minus pure offsets.  */
static enum verdict
integer_proof (tree value, hash_set<tree> *visited, int depth)
{
  gimple *def;

  if (TREE_CODE (value) != SSA_NAME || !INTEGRAL_TYPE_P (TREE_TYPE (value))
      || TYPE_PRECISION (TREE_TYPE (value)) < POINTER_SIZE
      || depth > POINTER_WALK_DEPTH || SSA_NAME_IS_DEFAULT_DEF (value))
    return INSTRUMENT;
  if (visited->add (value))
    return SKIP_POINTER_TO_STACK;
  def = SSA_NAME_DEF_STMT (value);
  if (gphi *phi = dyn_cast<gphi *> (def))
    {
      for (unsigned i = 0; i < gimple_phi_num_args (phi); i++)
        if (integer_proof (gimple_phi_arg_def (phi, i), visited, depth + 1)
            == INSTRUMENT)
          return INSTRUMENT;
      return gimple_phi_num_args (phi) > 0 ? SKIP_POINTER_TO_STACK : INSTRUMENT;
    }
  if (!is_gimple_assign (def))
    return INSTRUMENT;
  tree first = gimple_assign_rhs1 (def);
  switch (gimple_assign_rhs_code (def))
    {
    CASE_CONVERT:
    case SSA_NAME:
      if (POINTER_TYPE_P (TREE_TYPE (first)))
        return address_proof (first, visited, depth + 1);
      return integer_proof (first, visited, depth + 1);
    case PLUS_EXPR:
    case MINUS_EXPR:
      {
        tree second = gimple_assign_rhs2 (def);
        hash_set<tree> offsets;
        enum verdict verdict = integer_proof (first, visited, depth + 1);
        if (verdict != INSTRUMENT && is_pure_offset (second, &offsets, 0))
          return SKIP_POINTER_TO_STACK;
        /* base + pointer-free offset, either way round for a sum.  */
        if (gimple_assign_rhs_code (def) == PLUS_EXPR
            && is_pure_offset (first, &offsets, 0)
            && integer_proof (second, visited, depth + 1) != INSTRUMENT)
          return SKIP_POINTER_TO_STACK;
        return INSTRUMENT;
      }
    default:
      return INSTRUMENT;
    }
}

/* See stack_analysis.h.  */
void
add_frame_storage_uids (bitmap uids)
{
  unsigned ix;
  tree var;

  FOR_EACH_LOCAL_DECL (cfun, ix, var)
  if (decl_is_frame_storage (var))
    bitmap_set_bit (uids, DECL_PT_UID (var));
  for (tree parm = DECL_ARGUMENTS (current_function_decl); parm;
       parm = DECL_CHAIN (parm))
    if (decl_is_frame_storage (parm))
      bitmap_set_bit (uids, DECL_PT_UID (parm));
  tree result = DECL_RESULT (current_function_decl);
  if (result && decl_is_frame_storage (result))
    bitmap_set_bit (uids, DECL_PT_UID (result));
}

/* The DECL_PT_UIDs of this frame's storage, for the points-to test.  */
static bitmap
frame_decl_uids (void)
{
  bitmap uids = BITMAP_ALLOC (NULL);
  add_frame_storage_uids (uids);
  return uids;
}

/* GCC's points-to solution for POINTER (computed at -O1 and above): stack
   when it names only variables of this frame (rule 4), or only automatic
   variables of any function of the unit (rule 6).  Heap objects are fake
   variables that are never frame decls, so a pointer that may reach the
   heap never passes; neither does one that may point anywhere, to
   globals, or to escaped memory.  */
static enum verdict
points_to_verdict (tree pointer, bitmap *frame_uids)
{
  struct ptr_info_def *info;
  struct pt_solution *pt;

  if (TREE_CODE (pointer) != SSA_NAME
      || (info = SSA_NAME_PTR_INFO (pointer)) == NULL)
    return INSTRUMENT;
  pt = &info->pt;
  if (pt->anything || pt->nonlocal || pt->escaped || pt->ipa_escaped
      || pt->vars_contains_escaped_heap || pt->vars == NULL
      || bitmap_empty_p (pt->vars))
    return INSTRUMENT;
  if (*frame_uids == NULL)
    *frame_uids = frame_decl_uids ();
  if (!pt->vars_contains_nonlocal
      && !bitmap_intersect_compl_p (pt->vars, *frame_uids))
    return SKIP_POINTS_TO_STACK;
  /* Under -fipa-pta the set may name other functions' automatic
     variables, which it flags as "nonlocal" (not this function's); a
     global would be flagged too, but is never in the unit's automatic
     variables.  */
  bitmap automatic = unit_automatic_variables ();
  if (automatic == NULL || !plugin_options.other_frames)
    return INSTRUMENT;
  bitmap_head others;
  bitmap_initialize (&others, &bitmap_default_obstack);
  bitmap_and_compl (&others, pt->vars, *frame_uids);
  bool only_automatic = !bitmap_intersect_compl_p (&others, automatic);
  bitmap_clear (&others);
  return only_automatic ? SKIP_POINTS_TO_OTHER_FRAMES : INSTRUMENT;
}

/* See stack_analysis.h.  */
bool
argument_is_stack (tree value)
{
  hash_set<tree> visited;
  bitmap frame_uids = NULL;
  bool stack = origin_proof (value, &visited, 0) != INSTRUMENT;
  if (!stack)
    {
      STRIP_NOPS (value);
      stack = points_to_verdict (value, &frame_uids) != INSTRUMENT;
    }
  if (frame_uids)
    BITMAP_FREE (frame_uids);
  return stack;
}

/* See stack_analysis.h.  */
enum verdict
stack_verdict (tree ref, tree address, enum stack_analysis level,
               bitmap *frame_uids)
{
  tree pointer;

  if (level == STACK_ANALYSIS_NONE)
    return INSTRUMENT;
  if (ref != NULL_TREE)
    {
      tree base = get_base_address (ref);
      if (base == NULL_TREE)
        return INSTRUMENT;
      if (DECL_P (base))
        return decl_is_frame_storage (base) ? SKIP_LOCAL_VARIABLE : INSTRUMENT;
      if (TREE_CODE (base) != MEM_REF && TREE_CODE (base) != TARGET_MEM_REF)
        return INSTRUMENT;
      pointer = TREE_OPERAND (base, 0);
    }
  else
    pointer = address;

  STRIP_NOPS (pointer);
  if (level == STACK_ANALYSIS_BASIC)
    {
      /* Only an alloca's result used directly.  */
      if (TREE_CODE (pointer) == SSA_NAME && !SSA_NAME_IS_DEFAULT_DEF (pointer)
          && gimple_alloca_call_p (SSA_NAME_DEF_STMT (pointer)))
        return SKIP_ALLOCA;
      if (TREE_CODE (pointer) == ADDR_EXPR)
        {
          tree base = get_base_address (TREE_OPERAND (pointer, 0));
          if (base && DECL_P (base) && decl_is_frame_storage (base))
            return SKIP_LOCAL_VARIABLE;
        }
      return INSTRUMENT;
    }

  hash_set<tree> visited;
  enum verdict verdict = address_proof (pointer, &visited, 0);
  if (verdict != INSTRUMENT)
    return verdict;
  return points_to_verdict (pointer, frame_uids);
}
