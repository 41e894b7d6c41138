/* Direct allocation calls (-fplugin-arg-memprof-direct-allocations): the
   always-on mode without the interposer's hops.

   With the runtime alone, every malloc is a call through the PLT to the
   runtime's malloc, its check (is the allocation one that sampling leaves
   out?), then a second indirect jump, through the runtime's GOT, to
   glibc's __libc_malloc; every free the same.  On a program that does
   little but allocate (a malloc+free pair of about 15 ns) the check and
   the extra jump are 10-25 % of its time.  This pass moves the check to
   the call sites of the code it compiles, and calls glibc directly
   (abi.h, "Direct allocation calls"):

     malloc (N)      site_known && countdown > max (N, 1)
                       ? (countdown -= max (N, 1), __libc_malloc (N))
                       : __memprof_direct_malloc (N, &site_known)
     calloc (C, S)   the same with C * S bytes, when C and S are both
                     below 2^32 (no overflow); __libc_calloc
     realloc (P, N)  the same when N != 0 and P is NULL or not 64-byte
                     aligned (never a recorded block); __libc_realloc
     free (P), operator delete (P[, SIZE])
                     site_known && !(*(P ? (size_t *) P - 1 : &site_known)
                                     & HEADER_TAG)
                       ? __libc_free (P)
                       : __memprof_direct_free (P, &site_known) (_delete)

   SITE_KNOWN is a byte of this unit for each call site (for a free site
   the first byte of a word, which is 0 or 1 and so never has
   HEADER_TAG: free (NULL) reads it in place of the word before the
   block, a conditional move rather than a branch on NULL, as json_tree
   frees NULL in 4 of its 10 frees), which only the
   runtime sets (runtime/direct_calls.c): for an allocation site once the
   census has been asked about it while sampling is on and nobody else
   watches (hooks, events, trace); for a free site while sampling is on,
   nobody watches and there are no slots of the runtime's.  It clears
   them when that stops being true.  So the decision is the interposed
   malloc's (runtime/allocator.c, malloc_left_out_quickly): the same
   countdown taken down by the same bytes, the census asked once a site;
   what is sampled, and the contexts, are those of the interposed build,
   as the runtime's entries tail-call the interposed functions with the
   site as their caller.  The countdown is the first word of the
   runtime's thread state, which an executable defines (local-exec: one
   %fs-relative load, no register held for it).  The unsampled path is
   then 8 instructions at the call site and glibc's own call.

   Left to the interposer: calls in code built without this option, in
   libraries and through pointers; operator new (it throws: the call
   sits in EH regions); calls that may throw or end their block.

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
#include "emit.h"
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
  *ok &= parse_flag (key, value, &direct_allocations);
  return true;
}

/* ---- The declarations the rewritten calls use ---- */

static GTY (()) tree countdown_decl;
static GTY (()) tree libc_malloc_decl;
static GTY (()) tree libc_calloc_decl;
static GTY (()) tree libc_realloc_decl;
static GTY (()) tree libc_free_decl;
static GTY (()) tree direct_malloc_decl;
static GTY (()) tree direct_calloc_decl;
static GTY (()) tree direct_realloc_decl;
static GTY (()) tree direct_free_decl;
static GTY (()) tree direct_delete_decl;
static GTY (()) tree direct_delete_sized_decl;

#define ROOT(decl)                                                             \
  {                                                                            \
    &decl, 1, sizeof (tree), &gt_ggc_mx_tree_node, &gt_pch_nx_tree_node        \
  }
static const struct ggc_root_tab direct_allocations_root_tab[]
    = { ROOT (countdown_decl),           ROOT (libc_malloc_decl),
        ROOT (libc_calloc_decl),         ROOT (libc_realloc_decl),
        ROOT (libc_free_decl),           ROOT (direct_malloc_decl),
        ROOT (direct_calloc_decl),       ROOT (direct_realloc_decl),
        ROOT (direct_free_decl),         ROOT (direct_delete_decl),
        ROOT (direct_delete_sized_decl), LAST_GGC_ROOT_TAB };

/* The thread's sampling state (abi.h): only its first word, the
   countdown, is read here.  In code for an executable it is defined in
   the program, so each check reads it at a constant offset from %fs
   (local-exec): no GOT load, no register held across the function for
   its offset.  The definition is one top-level block of each unit
   (define_countdown), weak
   in a COMDAT group: the link keeps one copy, the static runtime's strong
   definition wins over it, and the shared runtime's references find the
   program's.  (A decl made one-only would be a GNU unique symbol, which
   the static runtime's definition would collide with.)  In a shared
   library's code it is the runtime's (initial-exec).  */
static tree
build_countdown (void)
{
  tree words = build_array_type_nelts (
      size_type_node, MEMPROF_SAMPLING_THREAD_SIZE / sizeof (uint64_t));
  tree decl = runtime_variable_decl (MEMPROF_SAMPLING_COUNTDOWN_NAME, words);
  TREE_ADDRESSABLE (decl) = 1;
  if (flag_shlib)
    {
      set_decl_tls_model (decl, TLS_MODEL_INITIAL_EXEC);
      return decl;
    }
  set_decl_tls_model (decl, TLS_MODEL_LOCAL_EXEC);
  return decl;
}

/* The program's definition of the thread's sampling state (see
   build_countdown): top-level asm, queued before IPA (a GIMPLE pass runs
   after the unit's top-level asm is written), in every unit of an
   executable compiled with the option.  */
static void
define_countdown (void *, void *)
{
  if (seen_error () || flag_shlib || flag_ltrans)
    return;
  const char *name = MEMPROF_SAMPLING_COUNTDOWN_NAME;
  int size = MEMPROF_SAMPLING_THREAD_SIZE;
  char definition[512];
  snprintf (definition, sizeof definition,
            "\t.pushsection .tbss.%s,\"awTG\",@nobits,%s,comdat\n"
            "\t.weak %s\n\t.type %s, @tls_object\n\t.size %s, %d\n"
            "\t.p2align 6\n%s:\n\t.zero %d\n\t.popsection",
            name, name, name, name, name, size, name, size);
  symtab->finalize_toplevel_asm (
      build_string (strlen (definition), definition));
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
  if (countdown_decl != NULL_TREE)
    return;
  countdown_decl = build_countdown ();
  tree size = size_type_node, pointer = ptr_type_node, none = void_type_node;
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
      "__libc_free", build_function_type_list (none, pointer, NULL_TREE),
      false);
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
  direct_free_decl = external_function (
      MEMPROF_DIRECT_FREE_NAME,
      build_function_type_list (none, pointer, site, NULL_TREE), false);
  direct_delete_decl = external_function (
      MEMPROF_DIRECT_DELETE_NAME,
      build_function_type_list (none, pointer, site, NULL_TREE), false);
  direct_delete_sized_decl = external_function (
      MEMPROF_DIRECT_DELETE_SIZED_NAME,
      build_function_type_list (none, pointer, size, site, NULL_TREE), false);
}

/* A byte of this unit for one call site (of TYPE: a free site's is a word,
   see above), which the runtime sets
   (runtime/direct_calls.c).  */
static tree
new_site_byte (tree type = unsigned_char_type_node)
{
  tree decl = build_decl (BUILTINS_LOCATION, VAR_DECL,
                          create_tmp_var_name ("memprof_site"), type);
  TREE_STATIC (decl) = 1;
  TREE_PUBLIC (decl) = 0;
  DECL_ARTIFICIAL (decl) = 1;
  DECL_IGNORED_P (decl) = 1;
  TREE_USED (decl) = 1;
  TREE_ADDRESSABLE (decl) = 1;
  DECL_INITIAL (decl) = build_zero_cst (type);
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
  DIRECT_FREE,
  DIRECT_DELETE,      /* operator delete (void *) */
  DIRECT_DELETE_SIZED /* operator delete (void *, size_t) */
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
  /* The replaceable operator delete (void *) and (void *, size_t) by
     their mangled names: not the array, aligned or nothrow forms.  */
  if (DECL_IS_OPERATOR_DELETE_P (fndecl)
      && DECL_IS_REPLACEABLE_OPERATOR (fndecl))
    {
      const char *name = IDENTIFIER_POINTER (DECL_ASSEMBLER_NAME (fndecl));
      if (strcmp (name, "_ZdlPv") == 0)
        return DIRECT_DELETE;
      if (strcmp (name, "_ZdlPvm") == 0)
        return DIRECT_DELETE_SIZED;
    }
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
append_load (gimple_seq *seq, tree ref)
{
  tree result = make_ssa_name (TREE_TYPE (ref));
  gimple_seq_add_stmt (seq, gimple_build_assign (result, ref));
  return result;
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

/* The countdown: the first word of the thread's sampling state.  */
static tree
countdown_ref (void)
{
  return build4 (ARRAY_REF, size_type_node, countdown_decl, size_zero_node,
                 NULL_TREE, NULL_TREE);
}

/* A test of the rewritten call: SEQ computes VALUE, a boolean.  */
struct condition
{
  gimple_seq seq;
  tree value;
};

/* The test "SITE's byte is set".  */
static struct condition
site_known (tree site)
{
  struct condition known = { NULL, NULL_TREE };
  tree byte = append_load (&known.seq, site);
  known.value = append_op (&known.seq, NE_EXPR, boolean_type_node, byte,
                           build_zero_cst (TREE_TYPE (site)));
  return known;
}

/* Adds to COND the test "the countdown is above BYTES"; *COUNTDOWN is
   the countdown as read.  */
static void
append_countdown_above (struct condition *cond, tree bytes, tree *countdown)
{
  *countdown = append_load (&cond->seq, countdown_ref ());
  tree above
      = append_op (&cond->seq, GT_EXPR, boolean_type_node, *countdown, bytes);
  cond->value = cond->value == NULL_TREE
                    ? above
                    : append_op (&cond->seq, BIT_AND_EXPR, boolean_type_node,
                                 cond->value, above);
}

/* The countdown's store, before the fast call.  */
static gimple_seq
take_down (tree countdown, tree bytes)
{
  gimple_seq seq = NULL;
  tree left = append_op (&seq, MINUS_EXPR, size_type_node, countdown, bytes);
  gimple_seq_add_stmt (&seq, gimple_build_assign (countdown_ref (), left));
  return seq;
}

/* Split CALL's block into a chain of N blocks before CALL, each ending in
   the branch on CONDS[I] (false: to CALL's own block, which SLOW
   replaces), a new block holding FAST_BEFORE and FAST (taken when all
   hold) and the block after both, where FAST's result and SLOW's meet in
   a PHI for the original result.  */
static void
branch_around (gcall *call, struct condition *conds, unsigned n, gcall *fast,
               gimple_seq fast_before, gcall *slow)
{
  basic_block bb = gimple_bb (call);
  location_t loc = gimple_location (call);
  gimple_stmt_iterator gsi = gsi_for_stmt (call);
  gsi_prev (&gsi);
  edge to_slow = gsi_end_p (gsi) ? split_block_after_labels (bb)
                                 : split_block (bb, gsi_stmt (gsi));
  basic_block test_bb = to_slow->src, slow_bb = to_slow->dest;
  edge slow_out = split_block (slow_bb, call);
  basic_block join_bb = slow_out->dest;
  class loop *loop = test_bb->loop_father;
  profile_count count = test_bb->count;

  to_slow->flags &= ~EDGE_FALLTHRU;
  to_slow->flags |= EDGE_FALSE_VALUE;
  for (unsigned i = 0; i < n; i++)
    {
      gimple_seq_add_stmt (&conds[i].seq,
                           gimple_build_cond (NE_EXPR, conds[i].value,
                                              boolean_false_node, NULL_TREE,
                                              NULL_TREE));
      gimple_stmt_iterator at = gsi_last_bb (test_bb);
      gsi_insert_seq_after (&at, conds[i].seq, GSI_CONTINUE_LINKING);
      if (i > 0)
        to_slow = make_edge (test_bb, slow_bb, EDGE_FALSE_VALUE);
      to_slow->probability = profile_probability::very_unlikely ();
      basic_block next = create_empty_bb (test_bb);
      if (current_loops != NULL)
        add_bb_to_loop (next, loop);
      edge onwards = make_edge (test_bb, next, EDGE_TRUE_VALUE);
      onwards->probability = profile_probability::very_likely ();
      count = count.apply_probability (onwards->probability);
      next->count = count;
      test_bb = next;
    }
  basic_block fast_bb = test_bb;
  edge fast_out = make_single_succ_edge (fast_bb, join_bb, EDGE_FALLTHRU);
  slow_bb->count = bb->count - count;
  tree lhs = gimple_call_lhs (call);
  gimple_set_location (fast, loc);
  gimple_stmt_iterator in_fast = gsi_start_bb (fast_bb);
  if (fast_before != NULL)
    gsi_insert_seq_after (&in_fast, fast_before, GSI_CONTINUE_LINKING);
  gsi_insert_after (&in_fast, fast, GSI_CONTINUE_LINKING);

  gimple_set_location (slow, loc);
  gimple_stmt_iterator in_slow = gsi_for_stmt (call);
  unlink_stmt_vdef (call);
  gsi_replace (&in_slow, slow, false);
  if (lhs != NULL_TREE)
    {
      tree fast_result = make_ssa_name (TREE_TYPE (lhs));
      tree slow_result = make_ssa_name (TREE_TYPE (lhs));
      gimple_call_set_lhs (fast, fast_result);
      gimple_call_set_lhs (slow, slow_result);
      update_stmt (fast);
      update_stmt (slow);
      gphi *phi = create_phi_node (lhs, join_bb);
      add_phi_arg (phi, fast_result, fast_out, loc);
      add_phi_arg (phi, slow_result, slow_out, loc);
    }
}

/* branch_around for an allocation of BYTES: CONDS[1] also tests the
   countdown, which the fast way takes down before FAST.  */
static void
branch_on_countdown (gcall *call, struct condition *conds, tree bytes,
                     gcall *fast, gcall *slow)
{
  tree countdown;
  append_countdown_above (&conds[1], bytes, &countdown);
  branch_around (call, conds, 2, fast, take_down (countdown, bytes), slow);
}

/* POINTER is NULL or not 64-byte aligned.  */
static tree
append_none_or_not_aligned (gimple_seq *seq, tree pointer)
{
  tree none = append_op (seq, EQ_EXPR, boolean_type_node, pointer,
                         build_zero_cst (TREE_TYPE (pointer)));
  return append_op (seq, BIT_IOR_EXPR, boolean_type_node, none,
                    append_not_aligned (seq, pointer));
}

/* The word before POINTER has no MEMPROF_HEADER_TAG (a glibc chunk's
   size field never has it), or POINTER is NULL: then SITE's word is read
   instead (0 or 1), by a select, not a branch.  No test of the block's
   alignment: a recorded block is 64-byte aligned, but which glibc blocks
   are is data (binary_trees' 32-byte chunks: every other free), and a
   branch on it was mispredicted on a third of the frees; the word before
   is on the block's own line otherwise, and glibc's free reads it.  */
static tree
append_untagged (gimple_seq *seq, tree pointer, tree site)
{
  tree address = make_ssa_name (size_type_node);
  gimple_seq_add_stmt (seq, gimple_build_assign (address, NOP_EXPR, pointer));
  tree none = append_op (seq, EQ_EXPR, boolean_type_node, address,
                         build_zero_cst (size_type_node));
  tree before = append_op (seq, MINUS_EXPR, size_type_node, address,
                           size_int (sizeof (uint64_t)));
  tree site_word = make_ssa_name (size_type_node);
  gimple_seq_add_stmt (seq, gimple_build_assign (site_word, NOP_EXPR,
                                                 build_fold_addr_expr (site)));
  tree chosen = make_ssa_name (size_type_node);
  gimple_seq_add_stmt (
      seq, gimple_build_assign (chosen, COND_EXPR, none, site_word, before));
  tree word_pointer = make_ssa_name (build_pointer_type (size_type_node));
  gimple_seq_add_stmt (seq,
                       gimple_build_assign (word_pointer, NOP_EXPR, chosen));
  tree word
      = append_load (seq, build2 (MEM_REF, size_type_node, word_pointer,
                                  build_int_cst (TREE_TYPE (word_pointer), 0)));
  tree tag = append_op (seq, BIT_AND_EXPR, size_type_node, word,
                        build_int_cst (size_type_node, MEMPROF_HEADER_TAG));
  return append_op (seq, EQ_EXPR, boolean_type_node, tag,
                    build_zero_cst (size_type_node));
}

static void
rewrite (gcall *call, enum direct_kind kind)
{
  bool frees = kind == DIRECT_FREE || kind == DIRECT_DELETE
               || kind == DIRECT_DELETE_SIZED;
  tree site = new_site_byte (frees ? size_type_node : unsigned_char_type_node);
  tree site_address = build_fold_addr_expr (site);
  struct condition conds[2] = { site_known (site), { NULL, NULL_TREE } };
  tree bytes;
  switch (kind)
    {
    case DIRECT_MALLOC:
      {
        tree size = as_size (&conds[1].seq, gimple_call_arg (call, 0));
        bytes = append_op (&conds[1].seq, MAX_EXPR, size_type_node, size,
                           build_one_cst (size_type_node));
        branch_on_countdown (
            call, conds, bytes, gimple_build_call (libc_malloc_decl, 1, size),
            gimple_build_call (direct_malloc_decl, 2, size, site_address));
        break;
      }
    case DIRECT_CALLOC:
      {
        /* No overflow when both are below 2^32.  */
        gimple_seq *seq = &conds[1].seq;
        tree count = as_size (seq, gimple_call_arg (call, 0));
        tree size = as_size (seq, gimple_call_arg (call, 1));
        tree either
            = append_op (seq, BIT_IOR_EXPR, size_type_node, count, size);
        tree high = append_op (seq, RSHIFT_EXPR, size_type_node, either,
                               build_int_cst (integer_type_node, 32));
        conds[1].value = append_op (seq, EQ_EXPR, boolean_type_node, high,
                                    build_zero_cst (size_type_node));
        tree product = append_op (seq, MULT_EXPR, size_type_node, count, size);
        bytes = append_op (seq, MAX_EXPR, size_type_node, product,
                           build_one_cst (size_type_node));
        branch_on_countdown (
            call, conds, bytes,
            gimple_build_call (libc_calloc_decl, 2, count, size),
            gimple_build_call (direct_calloc_decl, 3, count, size,
                               site_address));
        break;
      }
    case DIRECT_REALLOC:
      {
        /* To a size above 0, from NULL or a block of glibc's.  */
        gimple_seq *seq = &conds[1].seq;
        tree pointer = gimple_call_arg (call, 0);
        tree size = as_size (seq, gimple_call_arg (call, 1));
        tree nonzero = append_op (seq, NE_EXPR, boolean_type_node, size,
                                  build_zero_cst (size_type_node));
        conds[1].value
            = append_op (seq, BIT_AND_EXPR, boolean_type_node, nonzero,
                         append_none_or_not_aligned (seq, pointer));
        branch_on_countdown (
            call, conds, size,
            gimple_build_call (libc_realloc_decl, 2, pointer, size),
            gimple_build_call (direct_realloc_decl, 3, pointer, size,
                               site_address));
        break;
      }
    case DIRECT_FREE:
    case DIRECT_DELETE:
    case DIRECT_DELETE_SIZED:
      {
        tree pointer = gimple_call_arg (call, 0);
        conds[1].value = append_untagged (&conds[1].seq, pointer, site);
        gcall *slow
            = kind == DIRECT_FREE ? gimple_build_call (direct_free_decl, 2,
                                                       pointer, site_address)
              : kind == DIRECT_DELETE
                  ? gimple_build_call (direct_delete_decl, 2, pointer,
                                       site_address)
                  : gimple_build_call (
                      direct_delete_sized_decl, 3, pointer,
                      as_size (&conds[0].seq, gimple_call_arg (call, 1)),
                      site_address);
        branch_around (call, conds, 2,
                       gimple_build_call (libc_free_decl, 1, pointer), NULL,
                       slow);
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

  /* Every function with a body, at every optimisation level.  */
  bool
  gate (function *) final override
  {
    return true;
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
  register_callback (plugin_name, PLUGIN_ALL_IPA_PASSES_START, define_countdown,
                     NULL);
  register_pass_after (plugin_name, new direct_allocations_pass (g), "memprof",
                       1);
}
