/* The stack analysis across calls: which pointer parameters receive only
   stack addresses from every one of their callers, and which functions
   return only stack addresses (rule 5 of stack_analysis.cc); and which
   variables of the unit are automatic (rule 6, points-to sets naming
   other functions' frames).

   A late simple IPA pass, "memprof-stack-params", after GCC's IPA
   points-to ("pta"), just before "simdclone", and before any function
   body is expanded.  At that
   point the call graph is final: inlining, cloning, IPA-SRA and
   IPA-CP have been decided, and the pass applies them to every body
   (cgraph_node::get_body, as IPA points-to does), so the calls it reads
   are the calls the program makes.  Later per-function passes never add
   a call site nor change what an argument designates.

   A function qualifies when GCC knows all its callers: it is local to
   the unit (cgraph_node::local_p: not exported, not address-taken, not
   used from another LTO partition), has no alias and is not a thunk, is
   not noipa, and every caller edge is a direct call in a body of this
   unit.  Under -flto, in a partition that holds the whole program
   (small programs, or -flto-partition=one), every function but main and
   what the linker says is used outside qualifies.

   Its pointer parameters start proven (the greatest fixed point, so that
   recursion is proven) and lose the proof as soon as one call passes an
   argument that the stack analysis does not prove stack in the caller:
   the caller's locals, allocas, pointer chains from them, points-to sets
   of automatic variables, a null pointer, a parameter of the caller
   still proven, or the result of a call to a function still proven to
   return such addresses.  A function returning a pointer keeps that
   proof while every value it returns is proven the same way in its own
   body.  Iterated until nothing changes.  Sound by induction on the depth of
   the call stack: the outermost call of a chain of proven functions
   passes an address its caller proves without any proven parameter, and
   each call below passes a value derived from stack addresses of frames
   that are still live (a caller's frame outlives its callee's).

   The proofs are kept as DECL_UIDs (never reused in a compilation, unlike
   the decls' addresses once a finished function is collected).  */

#include "gcc-plugin.h"

#include "tree.h"
#include "tree-pass.h"
#include "context.h"
#include "function.h"
#include "basic-block.h"
#include "gimple.h"
#include "ssa.h"
#include "tree-cfg.h"
#include "cgraph.h"
#include "bitmap.h"
#include "attribs.h"
#include "dumpfile.h"
#include "diagnostic-core.h"

#include "plugin.h"
#include "stack_analysis.h"
#include "stack_params.h"

/* The bitmaps below outlive the late IPA passes, whose default obstack is
   released before any function is expanded.  */
static bitmap_obstack proofs_obstack;
static bitmap proven_parameters;   /* DECL_UIDs */
static bitmap proven_returns;      /* DECL_UIDs of functions */
static bitmap automatic_variables; /* DECL_PT_UIDs */

/* See stack_params.h.  */
bool
parameter_is_callers_frame (tree parm)
{
  return proven_parameters != NULL && TREE_CODE (parm) == PARM_DECL
         && bitmap_bit_p (proven_parameters, DECL_UID (parm));
}

/* See stack_params.h.  */
bool
function_returns_stack (tree fndecl)
{
  return proven_returns != NULL
         && bitmap_bit_p (proven_returns, DECL_UID (fndecl));
}

/* See stack_params.h.  */
bitmap
unit_automatic_variables (void)
{
  return automatic_variables;
}

/* Is the parameter PARM a pointer whose value alone says where it
   points?  A parameter passed by invisible reference points to the
   caller's copy, which is not an argument of the call.  */
static bool
is_candidate_parameter (tree parm)
{
  return POINTER_TYPE_P (TREE_TYPE (parm)) && !DECL_BY_REFERENCE (parm);
}

/* Does GCC know every call of NODE: every one a direct call, in a body of
   this unit, that this pass reads?  */
static bool
all_callers_known (cgraph_node *node)
{
  if (!node->has_gimple_body_p () || node->inlined_to || node->thunk
      || !node->local_p () || node->address_taken || node->has_aliases_p ()
      || node->used_from_other_partition || node->force_output
      || lookup_attribute ("noipa", DECL_ATTRIBUTES (node->decl)))
    return false;
  for (cgraph_edge *edge = node->callers; edge; edge = edge->next_caller)
    {
      cgraph_node *caller = edge->caller;
      if (edge->call_stmt == NULL || edge->speculative || caller->inlined_to
          || caller->thunk || !caller->has_gimple_body_p ()
          || DECL_STRUCT_FUNCTION (caller->decl) == NULL)
        return false;
    }
  return true;
}

/* Take away the proof of every parameter of NODE that one of its calls
   does not pass a stack address to.  True when one was taken away.  */
static bool
withdraw_unproven (cgraph_node *node)
{
  bool changed = false;
  for (cgraph_edge *edge = node->callers; edge; edge = edge->next_caller)
    {
      gcall *call = edge->call_stmt;
      unsigned index = 0;
      push_cfun (DECL_STRUCT_FUNCTION (edge->caller->decl));
      for (tree parm = DECL_ARGUMENTS (node->decl); parm;
           parm = DECL_CHAIN (parm), index++)
        {
          if (!bitmap_bit_p (proven_parameters, DECL_UID (parm)))
            continue;
          if (index < gimple_call_num_args (call)
              && argument_is_stack (gimple_call_arg (call, index)))
            continue;
          bitmap_clear_bit (proven_parameters, DECL_UID (parm));
          changed = true;
        }
      pop_cfun ();
    }
  return changed;
}

/* Take away the proof that NODE returns only stack addresses if one of
   its returns is not proven.  True when it was taken away.  */
static bool
withdraw_unproven_return (cgraph_node *node)
{
  basic_block bb;
  bool proven = true;

  if (!bitmap_bit_p (proven_returns, DECL_UID (node->decl)))
    return false;
  push_cfun (DECL_STRUCT_FUNCTION (node->decl));
  FOR_EACH_BB_FN (bb, cfun)
  {
    greturn *ret = safe_dyn_cast<greturn *> (last_stmt (bb));
    if (ret
        && (gimple_return_retval (ret) == NULL_TREE
            || !argument_is_stack (gimple_return_retval (ret))))
      proven = false;
  }
  pop_cfun ();
  if (!proven)
    bitmap_clear_bit (proven_returns, DECL_UID (node->decl));
  return !proven;
}

/* Record the frame storage of every function: rule 6's universe.  */
static void
collect_automatic_variables (cgraph_node *node)
{
  push_cfun (DECL_STRUCT_FUNCTION (node->decl));
  add_frame_storage_uids (automatic_variables);
  pop_cfun ();
}

static void
dump_proven (void)
{
  cgraph_node *node;
  FOR_EACH_FUNCTION_WITH_GIMPLE_BODY (node)
  for (tree parm = DECL_ARGUMENTS (node->decl); parm; parm = DECL_CHAIN (parm))
    if (parameter_is_callers_frame (parm))
      fprintf (dump_file, ";; memprof: parameter %s of %s: callers' frames\n",
               IDENTIFIER_POINTER (DECL_NAME (parm)), node->dump_name ());
}

static unsigned int
prove_parameters (void)
{
  cgraph_node *node;
  auto_vec<cgraph_node *> candidates;
  bool changed;
  unsigned rounds = 0;

  bitmap_obstack_initialize (&proofs_obstack);
  proven_parameters = BITMAP_ALLOC (&proofs_obstack);
  automatic_variables = BITMAP_ALLOC (&proofs_obstack);
  proven_returns = BITMAP_ALLOC (&proofs_obstack);

  /* Apply inlining and the other IPA transforms to every body first: the
     call edges then name the calls as they will be compiled.  */
  FOR_EACH_FUNCTION_WITH_GIMPLE_BODY (node)
  if (!node->inlined_to && !node->in_other_partition)
    node->get_body ();
  FOR_EACH_FUNCTION_WITH_GIMPLE_BODY (node)
  if (!node->inlined_to && !node->in_other_partition
      && DECL_STRUCT_FUNCTION (node->decl))
    collect_automatic_variables (node);

  FOR_EACH_FUNCTION_WITH_GIMPLE_BODY (node)
  {
    bool any = false;
    if (!all_callers_known (node))
      continue;
    for (tree parm = DECL_ARGUMENTS (node->decl); parm;
         parm = DECL_CHAIN (parm))
      if (is_candidate_parameter (parm))
        {
          bitmap_set_bit (proven_parameters, DECL_UID (parm));
          any = true;
        }
    if (POINTER_TYPE_P (TREE_TYPE (TREE_TYPE (node->decl))))
      {
        bitmap_set_bit (proven_returns, DECL_UID (node->decl));
        any = true;
      }
    if (any)
      candidates.safe_push (node);
  }
  do
    {
      changed = false;
      rounds++;
      for (cgraph_node *candidate : candidates)
        {
          changed |= withdraw_unproven (candidate);
          changed |= withdraw_unproven_return (candidate);
        }
    }
  while (changed);

  if (dump_file)
    {
      fprintf (dump_file,
               ";; memprof: %u functions with all callers known, "
               "fixed point in %u rounds\n",
               candidates.length (), rounds);
      dump_proven ();
      FOR_EACH_FUNCTION_WITH_GIMPLE_BODY (node)
      if (function_returns_stack (node->decl))
        fprintf (dump_file, ";; memprof: %s returns stack addresses\n",
                 node->dump_name ());
    }
  return 0;
}

static const pass_data stack_params_pass_data = {
  SIMPLE_IPA_PASS,
  "memprof-stack-params",
  OPTGROUP_NONE,
  TV_NONE,
  0,
  0,
  0,
  0,
  0,
};

class stack_params_pass : public simple_ipa_opt_pass
{
public:
  stack_params_pass (gcc::context *context)
      : simple_ipa_opt_pass (stack_params_pass_data, context)
  {
  }

  /* Only when optimising (at -O0 a parameter lives in memory and is
     loaded, never an SSA default definition the proofs could name), only
     at stack-analysis=full and unless other-frames=0.  */
  bool
  gate (function *) final override
  {
    return optimize && plugin_options.instrument
           && plugin_options.stack_analysis == STACK_ANALYSIS_FULL
           && plugin_options.other_frames && !seen_error ();
  }

  unsigned int
  execute (function *) final override
  {
    return prove_parameters ();
  }
};

/* See stack_params.h.  */
opt_pass *
make_stack_params_pass (gcc::context *context)
{
  return new stack_params_pass (context);
}
