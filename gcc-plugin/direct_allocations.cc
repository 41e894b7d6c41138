/* Direct allocation calls (-fplugin-arg-memprof-direct-allocations): the
   always-on mode without the interposer's hops.

   With the runtime alone, every malloc is a call through the PLT to the
   runtime's malloc, its check (is the allocation one that sampling leaves
   out?), then a second indirect jump, through the runtime's GOT, to
   glibc's __libc_malloc; every free the same.  On a program that does
   little but allocate (a malloc+free pair of about 15 ns) the check and
   the extra jump are 10-25 % of its time.  This pass moves the check to
   the call site of the compiled code, where it is a few instructions
   that the processor overlaps with the caller's own, and calls glibc
   directly (abi.h, "Direct allocation calls"):

     malloc (N)      flag == OPEN && site_known && countdown > max (N, 1)
                       ? (countdown -= max (N, 1), __libc_malloc (N))
                       : __memprof_direct_malloc (N, &site_known)
     calloc (C, S)   the same with C * S bytes, when C and S are both
                     below 2^32 (no overflow); __libc_calloc
     realloc (P, N)  the same when N != 0 and P is NULL or not 64-byte
                     aligned (not a recorded block); __libc_realloc
     free (P), operator delete (P[, SIZE])
                     (flag & UNWATCHED) && P % 64 != 0
                       ? __libc_free (P) : the call as it was

   The decision is the interposed malloc's (runtime/allocator.c,
   malloc_left_out_quickly; runtime/direct_calls.c): the same flag, the
   same countdown taken down by the same bytes, the census asked once a
   site.  So what is sampled, and the contexts, are those of the
   interposed build; the sampled calls still go through the runtime's
   malloc, with the site as their caller.  Calls in code built without
   this option, in libraries and through pointers keep the interposer.

   The runtime's flag byte is read through the GOT, so the code must be
   position-independent (-fPIE, GCC's default here, or -fPIC): without it
   the pass leaves the calls alone and says so once.

   The pass runs after the instrumentation pass ("memprof"), after every
   GIMPLE optimisation.  */

#include "gcc-plugin.h"

#include "tree.h"
#include "tree-pass.h"
#include "context.h"
#include "function.h"
#include "basic-block.h"
#include "cfghooks.h"
#include "cfgloop.h"
#include "gimple.h"
#include "gimple-iterator.h"
#include "ssa.h"
#include "tree-into-ssa.h"
#include "tree-cfg.h"
#include "tree-eh.h"
#include "stringpool.h"
#include "attribs.h"
#include "diagnostic-core.h"
#include "varasm.h"
#include "cgraph.h"
#include "gimplify.h"
#include "gimplify-me.h"

#include "memprof/abi.h"
#include "plugin.h"
#include "pass.h"
#include "direct_allocations.h"

static bool direct_allocations;

const char direct_allocations_help[]
    = "  direct-allocations[=0|1]  decide at each malloc, calloc, realloc,\n"
      "                        free and operator delete call whether\n"
      "                        sampling leaves it out, and call glibc\n"
      "                        directly (default 0; the always-on mode:\n"
      "                        see direct_allocations.cc)\n";

/* See direct_allocations.h.  */
bool
direct_allocations_argument (const char *key, const char *value, bool *ok)
{
  if (strcmp (key, "direct-allocations") != 0)
    return false;
  if (value == NULL || strcmp (value, "1") == 0)
    direct_allocations = true;
  else if (strcmp (value, "0") == 0)
    direct_allocations = false;
  else
    {
      error ("memprof: bad value %qs in "
             "%<-fplugin-arg-memprof-direct-allocations=%s%>: expected 0 or "
             "1",
             value, value);
      *ok = false;
    }
  return true;
}

/* ---- The declarations the rewritten calls use ---- */

static GTY (()) tree flag_decl;
static GTY (()) tree countdown_decl;
static GTY (()) tree libc_malloc_decl;
static GTY (()) tree libc_calloc_decl;
static GTY (()) tree libc_realloc_decl;
static GTY (()) tree libc_free_decl;
static GTY (()) tree direct_malloc_decl;
static GTY (()) tree direct_calloc_decl;
static GTY (()) tree direct_realloc_decl;

static const struct ggc_root_tab direct_allocations_root_tab[]
    = { { &flag_decl, 1, sizeof (tree), &gt_ggc_mx_tree_node,
          &gt_pch_nx_tree_node },
        { &countdown_decl, 1, sizeof (tree), &gt_ggc_mx_tree_node,
          &gt_pch_nx_tree_node },
        { &libc_malloc_decl, 1, sizeof (tree), &gt_ggc_mx_tree_node,
          &gt_pch_nx_tree_node },
        { &libc_calloc_decl, 1, sizeof (tree), &gt_ggc_mx_tree_node,
          &gt_pch_nx_tree_node },
        { &libc_realloc_decl, 1, sizeof (tree), &gt_ggc_mx_tree_node,
          &gt_pch_nx_tree_node },
        { &libc_free_decl, 1, sizeof (tree), &gt_ggc_mx_tree_node,
          &gt_pch_nx_tree_node },
        { &direct_malloc_decl, 1, sizeof (tree), &gt_ggc_mx_tree_node,
          &gt_pch_nx_tree_node },
        { &direct_calloc_decl, 1, sizeof (tree), &gt_ggc_mx_tree_node,
          &gt_pch_nx_tree_node },
        { &direct_realloc_decl, 1, sizeof (tree), &gt_ggc_mx_tree_node,
          &gt_pch_nx_tree_node },
        LAST_GGC_ROOT_TAB };

/* An external variable of the runtime named NAME, of TYPE.  */
static tree
runtime_variable (const char *name, tree type)
{
  tree decl
      = build_decl (BUILTINS_LOCATION, VAR_DECL, get_identifier (name), type);
  TREE_PUBLIC (decl) = 1;
  DECL_EXTERNAL (decl) = 1;
  TREE_STATIC (decl) = 1;
  DECL_ARTIFICIAL (decl) = 1;
  DECL_IGNORED_P (decl) = 1;
  TREE_USED (decl) = 1;
  SET_DECL_ASSEMBLER_NAME (decl, get_identifier (name));
  return decl;
}

/* A function NAME of FNTYPE that does not throw; MALLOC_LIKE when it
   returns fresh memory.  */
static tree
external_function (const char *name, tree fntype, bool malloc_like)
{
  tree decl = build_fn_decl (name, fntype);
  SET_DECL_ASSEMBLER_NAME (decl, get_identifier (name));
  TREE_NOTHROW (decl) = 1;
  DECL_IS_MALLOC (decl) = malloc_like;
  /* Through the GOT, as glibc's own calls are: one indirect call, no
     PLT stub.  */
  DECL_ATTRIBUTES (decl)
      = tree_cons (get_identifier ("noplt"), NULL_TREE, DECL_ATTRIBUTES (decl));
  return decl;
}

static void
build_decls (void)
{
  if (flag_decl != NULL_TREE)
    return;
  flag_decl
      = runtime_variable (MEMPROF_UNSAMPLED_PATH_NAME, unsigned_char_type_node);
  /* Weak: read through the GOT, never copied into the program.  */
  DECL_WEAK (flag_decl) = 1;
  countdown_decl
      = runtime_variable (MEMPROF_SAMPLING_COUNTDOWN_NAME, size_type_node);
  /* The runtime is loaded with the program: its TLS is in the static
     block, one %fs-relative access after the GOT's offset.  */
  set_decl_tls_model (countdown_decl, TLS_MODEL_INITIAL_EXEC);

  tree size = size_type_node, pointer = ptr_type_node;
  tree site = build_pointer_type (unsigned_char_type_node);
  libc_malloc_decl = external_function (
      "__libc_malloc", build_function_type_list (pointer, size, NULL_TREE),
      true);
  libc_calloc_decl = external_function (
      "__libc_calloc",
      build_function_type_list (pointer, size, size, NULL_TREE), true);
  libc_realloc_decl = external_function (
      "__libc_realloc",
      build_function_type_list (pointer, pointer, size, NULL_TREE), false);
  libc_free_decl = external_function (
      "__libc_free",
      build_function_type_list (void_type_node, pointer, NULL_TREE), false);
  direct_malloc_decl = external_function (
      MEMPROF_DIRECT_MALLOC_NAME,
      build_function_type_list (pointer, size, site, NULL_TREE), true);
  direct_calloc_decl = external_function (
      MEMPROF_DIRECT_CALLOC_NAME,
      build_function_type_list (pointer, size, size, site, NULL_TREE), true);
  direct_realloc_decl = external_function (
      MEMPROF_DIRECT_REALLOC_NAME,
      build_function_type_list (pointer, pointer, size, site, NULL_TREE),
      false);
}

/* A byte of this unit for one call site: the census has seen it.  */
static tree
new_site_byte (void)
{
  tree decl = build_decl (BUILTINS_LOCATION, VAR_DECL,
                          create_tmp_var_name ("memprof_site"),
                          unsigned_char_type_node);
  TREE_STATIC (decl) = 1;
  TREE_PUBLIC (decl) = 0;
  DECL_ARTIFICIAL (decl) = 1;
  DECL_IGNORED_P (decl) = 1;
  TREE_USED (decl) = 1;
  TREE_ADDRESSABLE (decl) = 1;
  DECL_INITIAL (decl) = build_zero_cst (unsigned_char_type_node);
  varpool_node::finalize_decl (decl);
  return decl;
}

/* ---- Which calls ---- */

enum direct_kind
{
  DIRECT_NONE,
  DIRECT_MALLOC,
  DIRECT_CALLOC,
  DIRECT_REALLOC,
  DIRECT_FREE /* free, operator delete (void *[, size_t]) */
};

static enum direct_kind
direct_kind_of (gimple *stmt)
{
  if (!is_gimple_call (stmt) || gimple_call_internal_p (stmt))
    return DIRECT_NONE;
  tree fndecl = gimple_call_fndecl (stmt);
  if (fndecl == NULL_TREE)
    return DIRECT_NONE;
  /* A call that may throw or that ends its block (EH, abnormal edges)
     keeps its place.  */
  if (stmt_can_throw_internal (cfun, stmt) || stmt_ends_bb_p (stmt))
    return DIRECT_NONE;
  tree lhs = gimple_call_lhs (stmt);
  if (lhs != NULL_TREE && TREE_CODE (lhs) != SSA_NAME)
    return DIRECT_NONE;
  if (fndecl_built_in_p (fndecl, BUILT_IN_NORMAL))
    switch (DECL_FUNCTION_CODE (fndecl))
      {
      case BUILT_IN_MALLOC:
        return DIRECT_MALLOC;
      case BUILT_IN_CALLOC:
        return DIRECT_CALLOC;
      case BUILT_IN_REALLOC:
        return DIRECT_REALLOC;
      case BUILT_IN_FREE:
        return DIRECT_FREE;
      default:
        return DIRECT_NONE;
      }
  /* The replaceable operator delete (void *) and (void *, size_t); not
     the aligned or nothrow forms.  */
  if (DECL_IS_OPERATOR_DELETE_P (fndecl)
      && DECL_IS_REPLACEABLE_OPERATOR (fndecl)
      && (gimple_call_num_args (stmt) == 1
          || (gimple_call_num_args (stmt) == 2
              && TREE_CODE (TREE_TYPE (gimple_call_arg (stmt, 1)))
                     == INTEGER_TYPE)))
    return DIRECT_FREE;
  return DIRECT_NONE;
}

/* ---- The rewrite ---- */

/* Append to SEQ "RESULT = A CODE B" of TYPE; returns RESULT.  */
static tree
append_op (gimple_seq *seq, enum tree_code code, tree type, tree a, tree b)
{
  tree result = make_ssa_name (type);
  gimple_seq_add_stmt (seq, gimple_build_assign (result, code, a, b));
  return result;
}

static tree
append_load (gimple_seq *seq, tree decl)
{
  tree result = make_ssa_name (TREE_TYPE (decl));
  gimple_seq_add_stmt (seq, gimple_build_assign (result, decl));
  return result;
}

/* POINTER is not 64-byte aligned (so glibc's, never a recorded block).  */
static tree
append_not_aligned (gimple_seq *seq, tree pointer)
{
  tree address = make_ssa_name (size_type_node);
  gimple_seq_add_stmt (seq, gimple_build_assign (address, NOP_EXPR, pointer));
  tree low = append_op (seq, BIT_AND_EXPR, size_type_node, address,
                        build_int_cst (size_type_node, 63));
  return append_op (seq, NE_EXPR, boolean_type_node, low,
                    build_zero_cst (size_type_node));
}

/* Split CALL's block into a condition block ending before CALL (it gets
   COND, computed by SEQ), CALL's own block (taken when COND is false), a
   new block holding FAST (taken when true) and the block after both.
   FAST's result and CALL's (replaced by SLOW when not NULL) meet in a PHI
   for the original result.  */
static void
branch_around (gimple *call, gimple_seq seq, tree cond, gcall *fast,
               gimple_seq fast_before, gcall *slow)
{
  basic_block bb = gimple_bb (call);
  location_t loc = gimple_location (call);
  gimple_stmt_iterator gsi = gsi_for_stmt (call);
  gsi_prev (&gsi);
  edge to_slow = gsi_end_p (gsi) ? split_block_after_labels (bb)
                                 : split_block (bb, gsi_stmt (gsi));
  basic_block cond_bb = to_slow->src, slow_bb = to_slow->dest;
  edge slow_out = split_block (slow_bb, call);
  basic_block join_bb = slow_out->dest;

  gimple_seq_add_stmt (&seq,
                       gimple_build_cond (NE_EXPR, cond, boolean_false_node,
                                          NULL_TREE, NULL_TREE));
  gimple_stmt_iterator at = gsi_last_bb (cond_bb);
  gsi_insert_seq_after (&at, seq, GSI_CONTINUE_LINKING);

  basic_block fast_bb = create_empty_bb (cond_bb);
  if (current_loops != NULL)
    add_bb_to_loop (fast_bb, cond_bb->loop_father);
  to_slow->flags &= ~EDGE_FALLTHRU;
  to_slow->flags |= EDGE_FALSE_VALUE;
  to_slow->probability = profile_probability::very_unlikely ();
  edge to_fast = make_edge (cond_bb, fast_bb, EDGE_TRUE_VALUE);
  to_fast->probability = profile_probability::very_likely ();
  edge fast_out = make_single_succ_edge (fast_bb, join_bb, EDGE_FALLTHRU);
  fast_bb->count = cond_bb->count.apply_probability (to_fast->probability);
  slow_bb->count = cond_bb->count.apply_probability (to_slow->probability);

  tree lhs = gimple_call_lhs (call);
  gimple_set_location (fast, loc);
  gimple_stmt_iterator in_fast = gsi_start_bb (fast_bb);
  if (fast_before != NULL)
    gsi_insert_seq_after (&in_fast, fast_before, GSI_CONTINUE_LINKING);
  gsi_insert_after (&in_fast, fast, GSI_CONTINUE_LINKING);

  if (slow != NULL)
    {
      gimple_set_location (slow, loc);
      gimple_stmt_iterator in_slow = gsi_for_stmt (call);
      unlink_stmt_vdef (call);
      gsi_replace (&in_slow, slow, false);
      call = slow;
    }
  if (lhs != NULL_TREE)
    {
      tree fast_result = make_ssa_name (TREE_TYPE (lhs));
      tree slow_result = make_ssa_name (TREE_TYPE (lhs));
      gimple_call_set_lhs (fast, fast_result);
      gimple_call_set_lhs (call, slow_result);
      update_stmt (fast);
      update_stmt (call);
      gphi *phi = create_phi_node (lhs, join_bb);
      add_phi_arg (phi, fast_result, fast_out, loc);
      add_phi_arg (phi, slow_result, slow_out, loc);
    }
}

/* The condition "sampling leaves BYTES out at this site" into SEQ, with
   the countdown as read in *COUNTDOWN.  */
static tree
append_left_out (gimple_seq *seq, tree bytes, tree site, tree *countdown)
{
  tree flag = append_load (seq, flag_decl);
  tree open = append_op (
      seq, EQ_EXPR, boolean_type_node, flag,
      build_int_cst (unsigned_char_type_node, MEMPROF_UNSAMPLED_OPEN));
  tree known = append_load (seq, site);
  tree seen = append_op (seq, NE_EXPR, boolean_type_node, known,
                         build_zero_cst (unsigned_char_type_node));
  *countdown = append_load (seq, countdown_decl);
  tree enough = append_op (seq, GT_EXPR, boolean_type_node, *countdown, bytes);
  tree both = append_op (seq, BIT_AND_EXPR, boolean_type_node, open, seen);
  return append_op (seq, BIT_AND_EXPR, boolean_type_node, both, enough);
}

/* The countdown's store, before the fast call.  */
static gimple_seq
take_down (tree countdown, tree bytes)
{
  gimple_seq seq = NULL;
  tree left = append_op (&seq, MINUS_EXPR, size_type_node, countdown, bytes);
  gimple_seq_add_stmt (&seq, gimple_build_assign (countdown_decl, left));
  return seq;
}

static tree
as_size (gimple_seq *seq, tree value)
{
  if (useless_type_conversion_p (size_type_node, TREE_TYPE (value)))
    return value;
  tree result = make_ssa_name (size_type_node);
  gimple_seq_add_stmt (seq, gimple_build_assign (result, NOP_EXPR, value));
  return result;
}

static void
rewrite (gcall *call, enum direct_kind kind)
{
  gimple_seq seq = NULL;
  tree countdown, cond, site, bytes;
  switch (kind)
    {
    case DIRECT_MALLOC:
      {
        tree size = as_size (&seq, gimple_call_arg (call, 0));
        site = new_site_byte ();
        bytes = append_op (&seq, MAX_EXPR, size_type_node, size,
                           build_one_cst (size_type_node));
        cond = append_left_out (&seq, bytes, site, &countdown);
        branch_around (call, seq, cond,
                       gimple_build_call (libc_malloc_decl, 1, size),
                       take_down (countdown, bytes),
                       gimple_build_call (direct_malloc_decl, 2, size,
                                          build_fold_addr_expr (site)));
        break;
      }
    case DIRECT_CALLOC:
      {
        tree count = as_size (&seq, gimple_call_arg (call, 0));
        tree size = as_size (&seq, gimple_call_arg (call, 1));
        site = new_site_byte ();
        tree either
            = append_op (&seq, BIT_IOR_EXPR, size_type_node, count, size);
        tree high = append_op (&seq, RSHIFT_EXPR, size_type_node, either,
                               build_int_cst (integer_type_node, 32));
        tree small = append_op (&seq, EQ_EXPR, boolean_type_node, high,
                                build_zero_cst (size_type_node));
        tree product = append_op (&seq, MULT_EXPR, size_type_node, count, size);
        bytes = append_op (&seq, MAX_EXPR, size_type_node, product,
                           build_one_cst (size_type_node));
        cond = append_left_out (&seq, bytes, site, &countdown);
        cond = append_op (&seq, BIT_AND_EXPR, boolean_type_node, cond, small);
        branch_around (call, seq, cond,
                       gimple_build_call (libc_calloc_decl, 2, count, size),
                       take_down (countdown, bytes),
                       gimple_build_call (direct_calloc_decl, 3, count, size,
                                          build_fold_addr_expr (site)));
        break;
      }
    case DIRECT_REALLOC:
      {
        tree pointer = gimple_call_arg (call, 0);
        tree size = as_size (&seq, gimple_call_arg (call, 1));
        site = new_site_byte ();
        tree nonzero = append_op (&seq, NE_EXPR, boolean_type_node, size,
                                  build_zero_cst (size_type_node));
        tree none = append_op (&seq, EQ_EXPR, boolean_type_node, pointer,
                               build_zero_cst (TREE_TYPE (pointer)));
        tree plain = append_op (&seq, BIT_IOR_EXPR, boolean_type_node, none,
                                append_not_aligned (&seq, pointer));
        cond = append_left_out (&seq, size, site, &countdown);
        cond = append_op (&seq, BIT_AND_EXPR, boolean_type_node, cond, nonzero);
        cond = append_op (&seq, BIT_AND_EXPR, boolean_type_node, cond, plain);
        branch_around (call, seq, cond,
                       gimple_build_call (libc_realloc_decl, 2, pointer, size),
                       take_down (countdown, size),
                       gimple_build_call (direct_realloc_decl, 3, pointer, size,
                                          build_fold_addr_expr (site)));
        break;
      }
    case DIRECT_FREE:
      {
        tree pointer = gimple_call_arg (call, 0);
        tree flag = append_load (&seq, flag_decl);
        tree unwatched
            = append_op (&seq, BIT_AND_EXPR, unsigned_char_type_node, flag,
                         build_int_cst (unsigned_char_type_node,
                                        MEMPROF_UNSAMPLED_UNWATCHED));
        tree watched = append_op (&seq, NE_EXPR, boolean_type_node, unwatched,
                                  build_zero_cst (unsigned_char_type_node));
        cond = append_op (&seq, BIT_AND_EXPR, boolean_type_node, watched,
                          append_not_aligned (&seq, pointer));
        branch_around (call, seq, cond,
                       gimple_build_call (libc_free_decl, 1, pointer), NULL,
                       NULL);
        break;
      }
    default:
      gcc_unreachable ();
    }
}

static unsigned
direct_allocations_function (void)
{
  auto_vec<gcall *> calls;
  auto_vec<int> kinds;
  basic_block bb;
  FOR_EACH_BB_FN (bb, cfun)
  for (gimple_stmt_iterator gsi = gsi_start_bb (bb); !gsi_end_p (gsi);
       gsi_next (&gsi))
    {
      enum direct_kind kind = direct_kind_of (gsi_stmt (gsi));
      if (kind != DIRECT_NONE)
        {
          calls.safe_push (as_a<gcall *> (gsi_stmt (gsi)));
          kinds.safe_push (kind);
        }
    }
  if (calls.is_empty ())
    return 0;
  build_decls ();
  for (unsigned i = 0; i < calls.length (); i++)
    rewrite (calls[i], (enum direct_kind) kinds[i]);
  free_dominance_info (CDI_DOMINATORS);
  mark_virtual_operands_for_renaming (cfun);
  return TODO_update_ssa_only_virtuals | TODO_cleanup_cfg;
}

static const pass_data direct_allocations_pass_data = {
  GIMPLE_PASS,
  "memprof_direct",
  OPTGROUP_NONE,
  TV_NONE,
  PROP_ssa | PROP_cfg | PROP_gimple_leh,
  0,
  0,
  0,
  0,
};

class direct_allocations_pass : public gimple_opt_pass
{
public:
  direct_allocations_pass (gcc::context *context)
      : gimple_opt_pass (direct_allocations_pass_data, context)
  {
  }

  /* Position-independent code only: the flag is read through the GOT
     (see above).  */
  bool
  gate (function *) final override
  {
    static bool said;
    if (flag_pic || flag_pie)
      return true;
    if (!said)
      inform (UNKNOWN_LOCATION,
              "memprof: %<-fplugin-arg-memprof-direct-allocations%> needs "
              "position-independent code (%<-fPIE%> or %<-fPIC%>): the "
              "allocation "
              "calls are left to the interposed functions");
    said = true;
    return false;
  }

  unsigned int
  execute (function *) final override
  {
    return direct_allocations_function ();
  }

  opt_pass *
  clone () final override
  {
    return new direct_allocations_pass (m_ctxt);
  }
};

/* See direct_allocations.h.  */
void
direct_allocations_register (const char *plugin_name)
{
  if (!direct_allocations)
    return;
  register_callback (plugin_name, PLUGIN_REGISTER_GGC_ROOTS, NULL,
                     (void *) direct_allocations_root_tab);
  register_pass_after (plugin_name, new direct_allocations_pass (g), "memprof",
                       1);
}
