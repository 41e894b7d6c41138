/* Run-time stack checks: counter updates skipped when a pointer
   parameter points into the running thread's stack.

   The stack analysis (stack_analysis.cc) proves a pointer parameter
   stack only when it sees every caller (stack_params.cc).  An exported
   function's parameter, and a static function's that one of them
   passes on, stays unproven, though most calls may pass a caller's
   local: libiberty's demangler threads `struct d_info *di', a local of
   its driver, through exported entry points, and 90% of its updates hit
   the stack.  Here such a function tests each such parameter once, at
   entry:

     on_stack = ((uintptr_t) p - __memprof_stack_low) < __memprof_stack_size

   (the runtime's initial-exec TLS words: the bounds pthread_getattr_np
   gives for this thread, or 0 and 0 until the runtime has them), and the
   update of every access made through p (copies, conversions and pointer
   arithmetic of p: the same object, by the language's rules, as rule 3
   of stack_analysis.cc) runs in a block of its own only when on_stack
   is false.

   Sound at run time, call by call: the same function called with a heap
   pointer counts its accesses, with a stack pointer skips them.  The
   bounds are the thread's own stack only: a fiber's stack, a
   sigaltstack or another thread's stack, even when they are heap
   blocks, fail the test and stay counted.  A thread whose stack is
   itself a heap block (pthread_attr_setstack with malloc'd memory) is
   the one exception, as for rules 5 and 6: other-frames=0 turns the
   checks off with them.

   Tested: only a pointer to a type that some frame of the unit holds
   (an addressable automatic variable's, an alloca's or a VLA's
   elements): an interpreter's state or a hash table never on the stack
   would pay a test per call and a branch per update for nothing.

   Not tested: pointers loaded from memory.  Testing those with two
   updates or more after their load removed 153 M more of the
   demangler's 1,001 M updates (its components, a VLA reached through
   di->comps) for no CPU time gained (1.01 of the time without, 11
   interleaved pairs): a test at each load costs what it saves.

   Taken: loads and stores (ranges keep their call) of functions at -O1
   and above, at stack-analysis=full, not counted in a register over a
   loop (combine.cc), not sampled (bursts.cc).  A combined update is
   taken with its accesses, which share its pointer.  */

#include "gcc-plugin.h"

#include "tree.h"
#include "function.h"
#include "basic-block.h"
#include "cfghooks.h"
#include "gimple.h"
#include "gimple-iterator.h"
#include "ssa.h"
#include "tree-cfg.h"
#include "cgraph.h"
#include "calls.h"
#include "hash-set.h"
#include "dumpfile.h"
#include "diagnostic-core.h"

#include "plugin.h"
#include "accesses.h"
#include "emit.h"
#include "bursts.h"
#include "stack_checks.h"

#define STACK_LOW_NAME "__memprof_stack_low"
#define STACK_SIZE_NAME "__memprof_stack_size"

/* The bound on walks from an access's pointer to the parameter.  */
#define PARAMETER_WALK_DEPTH 32

const char stack_checks_help[]
    = "  -fplugin-arg-memprof-stack-checks=0|1    skip at run time the "
      "updates through a pointer parameter that points into the thread's "
      "stack (default 1)\n";

static bool stack_checks_on = true;

static GTY (()) tree stack_low_decl;
static GTY (()) tree stack_size_decl;

const struct ggc_root_tab stack_checks_roots[]
    = { { &stack_low_decl, 1, sizeof (tree), &gt_ggc_mx_tree_node,
          &gt_pch_nx_tree_node },
        { &stack_size_decl, 1, sizeof (tree), &gt_ggc_mx_tree_node,
          &gt_pch_nx_tree_node },
        LAST_GGC_ROOT_TAB };

/* See stack_checks.h.  */
bool
stack_checks_argument (const char *key, const char *value, bool *ok)
{
  if (strcmp (key, "stack-checks") != 0)
    return false;
  *ok &= parse_flag (key, value, &stack_checks_on);
  return true;
}

/* An update taken: inserted by stack_checks_end behind the test of
   ON_STACK.  */
struct checked_update
{
  gimple *stmt;
  gimple_seq seq;
  tree on_stack;
};

static vec<checked_update> checked_updates;

/* A parameter of the current function (its incoming SSA value) and its
   test's result; in the order met, so that the code is the same from
   one compilation to the next.  */
struct parameter_test
{
  tree parameter;
  tree on_stack;
};

static vec<parameter_test> parameter_tests;

/* The types of the unit's automatic variables whose address is taken
   (array elements for arrays), found once, before the first function
   is compiled on (each is then still in GIMPLE).  A parameter is
   tested only when it points to one of them: a pointer to a type no
   frame holds (an interpreter's state, a hash table) would pay for a
   test at every call and a branch at every update for nothing.  Only
   what is tested depends on it, never whether a skip is right.  */
static hash_set<tree> *frame_types;

static void
add_frame_type (tree type)
{
  while (TREE_CODE (type) == ARRAY_TYPE)
    type = TREE_TYPE (type);
  frame_types->add (TYPE_MAIN_VARIANT (type));
}

/* What the pointer an alloca or a variable-length array returns points
   to, or is converted to: a VLA's elements.  */
static void
add_alloca_types (function *fn)
{
  basic_block bb;
  FOR_EACH_BB_FN (bb, fn)
  for (gimple_stmt_iterator gsi = gsi_start_bb (bb); !gsi_end_p (gsi);
       gsi_next (&gsi))
    {
      gimple *stmt = gsi_stmt (gsi);
      /* Asked first: gimple_call_lhs of a statement that is not a call
         reads what is not there (GCC crashed so on containers.cc).  */
      if (!gimple_alloca_call_p (stmt))
        continue;
      tree pointer = gimple_call_lhs (stmt);
      if (pointer == NULL_TREE || TREE_CODE (pointer) != SSA_NAME)
        continue;
      add_frame_type (TREE_TYPE (TREE_TYPE (pointer)));
      imm_use_iterator uses;
      gimple *use;
      FOR_EACH_IMM_USE_STMT (use, uses, pointer)
      if (gimple_assign_cast_p (use)
          && POINTER_TYPE_P (TREE_TYPE (gimple_assign_lhs (use))))
        add_frame_type (TREE_TYPE (TREE_TYPE (gimple_assign_lhs (use))));
    }
}

static void
collect_frame_types (void)
{
  cgraph_node *node;
  unsigned ix;
  tree var;

  frame_types = new hash_set<tree>;
  FOR_EACH_FUNCTION_WITH_GIMPLE_BODY (node)
  {
    function *fn = DECL_STRUCT_FUNCTION (node->decl);
    if (fn == NULL || fn->cfg == NULL || !gimple_in_ssa_p (fn))
      continue;
    FOR_EACH_LOCAL_DECL (fn, ix, var)
    if (VAR_P (var) && TREE_ADDRESSABLE (var) && !TREE_STATIC (var)
        && !DECL_EXTERNAL (var))
      add_frame_type (TREE_TYPE (var));
    add_alloca_types (fn);
  }
}

/* Does PARAMETER point to a type some frame of the unit holds?  */
static bool
points_to_frame_type (tree parameter)
{
  tree type = TREE_TYPE (parameter);
  return POINTER_TYPE_P (type)
         && frame_types->contains (TYPE_MAIN_VARIANT (TREE_TYPE (type)));
}

static bool
checks_apply (void)
{
  return stack_checks_on && optimize > 0
         && plugin_options.stack_analysis == STACK_ANALYSIS_FULL
         && plugin_options.other_frames && !access_sampling_enabled ();
}

/* The incoming value of the pointer parameter that POINTER is made from
   by copies, conversions and pointer arithmetic, or NULL_TREE.  */
static tree
parameter_of (tree pointer)
{
  for (int depth = 0; depth < PARAMETER_WALK_DEPTH; depth++)
    {
      STRIP_NOPS (pointer);
      if (TREE_CODE (pointer) == ADDR_EXPR)
        {
          tree base = get_base_address (TREE_OPERAND (pointer, 0));
          if (base == NULL_TREE || TREE_CODE (base) != MEM_REF)
            return NULL_TREE;
          pointer = TREE_OPERAND (base, 0);
          continue;
        }
      if (TREE_CODE (pointer) != SSA_NAME
          || !POINTER_TYPE_P (TREE_TYPE (pointer)))
        return NULL_TREE;
      if (SSA_NAME_IS_DEFAULT_DEF (pointer))
        {
          tree var = SSA_NAME_VAR (pointer);
          return var != NULL_TREE && TREE_CODE (var) == PARM_DECL
                         && !DECL_BY_REFERENCE (var)
                     ? pointer
                     : NULL_TREE;
        }
      gimple *def = SSA_NAME_DEF_STMT (pointer);
      if (!is_gimple_assign (def))
        return NULL_TREE;
      switch (gimple_assign_rhs_code (def))
        {
        case POINTER_PLUS_EXPR:
        case SSA_NAME:
        case ADDR_EXPR:
        CASE_CONVERT:
          pointer = gimple_assign_rhs1 (def);
          break;
        default:
          return NULL_TREE;
        }
    }
  return NULL_TREE;
}

/* The parameter the access A is made through, or NULL_TREE.  */
static tree
access_parameter (const memory_access *a)
{
  if (a->kind != ACCESS_LOAD && a->kind != ACCESS_STORE)
    return NULL_TREE;
  if (a->ref == NULL_TREE)
    return parameter_of (a->address);
  tree base = get_base_address (a->ref);
  if (base == NULL_TREE)
    return NULL_TREE;
  if (TREE_CODE (base) == TARGET_MEM_REF && TMR_INDEX2 (base) != NULL_TREE)
    return NULL_TREE;
  if (TREE_CODE (base) != MEM_REF && TREE_CODE (base) != TARGET_MEM_REF)
    return NULL_TREE;
  return parameter_of (TREE_OPERAND (base, 0));
}

/* See stack_checks.h.  */
void
stack_checks_begin (void)
{
  checked_updates.truncate (0);
  parameter_tests.truncate (0);
  if (frame_types == NULL && checks_apply ())
    collect_frame_types ();
}

/* See stack_checks.h.  */
bool
insert_unless_on_stack (const memory_access *a, gimple_seq seq)
{
  if (!checks_apply ())
    return false;
  tree parameter = access_parameter (a);
  if (parameter == NULL_TREE || !points_to_frame_type (parameter))
    return false;
  tree on_stack = NULL_TREE;
  for (const parameter_test &test : parameter_tests)
    if (test.parameter == parameter)
      on_stack = test.on_stack;
  if (on_stack == NULL_TREE)
    {
      on_stack = make_ssa_name (boolean_type_node);
      struct parameter_test test = { parameter, on_stack };
      parameter_tests.safe_push (test);
    }
  struct checked_update update = { a->stmt, seq, on_stack };
  checked_updates.safe_push (update);
  return true;
}

static tree
append (gimple_seq *seq, enum tree_code code, tree type, tree a,
        tree b = NULL_TREE)
{
  tree result = make_ssa_name (type);
  gimple_seq_add_stmt (seq, b ? gimple_build_assign (result, code, a, b)
                              : gimple_build_assign (result, code, a));
  return result;
}

/* At the function's entry, each parameter's test.  */
static void
insert_tests (void)
{
  if (stack_low_decl == NULL_TREE)
    {
      stack_low_decl = executable_thread_variable (STACK_LOW_NAME);
      stack_size_decl = executable_thread_variable (STACK_SIZE_NAME);
    }
  tree uptr = long_unsigned_type_node;
  gimple_seq seq = NULL;
  tree low = make_ssa_name (uptr);
  gimple_seq_add_stmt (&seq, gimple_build_assign (low, stack_low_decl));
  tree size = make_ssa_name (uptr);
  gimple_seq_add_stmt (&seq, gimple_build_assign (size, stack_size_decl));
  for (const parameter_test &test : parameter_tests)
    {
      tree address = append (&seq, NOP_EXPR, uptr, test.parameter);
      tree offset = append (&seq, MINUS_EXPR, uptr, address, low);
      gimple_seq_add_stmt (
          &seq, gimple_build_assign (test.on_stack, LT_EXPR, offset, size));
    }
  gsi_insert_seq_on_edge_immediate (
      single_succ_edge (ENTRY_BLOCK_PTR_FOR_FN (cfun)), seq);
}

/* SEQ before STMT, in a block that runs when ON_STACK is false.  */
static void
insert_checked (gimple *stmt, gimple_seq seq, tree on_stack)
{
  basic_block update, rest;
  basic_block block = insert_in_block_of_its_own (stmt, seq, &update, &rest);
  gimple_stmt_iterator end = gsi_last_bb (block);
  gcond *cond = gimple_build_cond (EQ_EXPR, on_stack, boolean_false_node,
                                   NULL_TREE, NULL_TREE);
  gimple_set_location (cond, gimple_location (stmt));
  gsi_insert_after (&end, cond, GSI_NEW_STMT);
  profile_probability counted = profile_probability::even ();
  edge taken = single_succ_edge (block);
  taken->flags &= ~EDGE_FALLTHRU;
  taken->flags |= EDGE_TRUE_VALUE;
  taken->probability = counted;
  update->count = block->count.apply_probability (counted);
  make_edge (block, rest, EDGE_FALSE_VALUE)->probability = counted.invert ();
}

/* See stack_checks.h.  */
unsigned
stack_checks_end (void)
{
  unsigned taken = checked_updates.length ();
  if (taken == 0)
    return 0;
  insert_tests ();
  for (const checked_update &update : checked_updates)
    insert_checked (update.stmt, update.seq, update.on_stack);
  free_dominance_info (CDI_DOMINATORS);
  if (dump_file)
    fprintf (dump_file,
             ";; memprof: %u update(s) skipped at run time when their "
             "pointer parameter is on the thread's stack (%u parameter(s) "
             "tested at entry)\n",
             taken, parameter_tests.length ());
  checked_updates.truncate (0);
  return taken;
}
