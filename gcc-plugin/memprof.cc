/* memprof.so: the GCC MemProf plugin for GCC 12.

   Instruments every load and store of GIMPLE with an inline update of a
   shadow counter (include/memprof/abi.h: one 8-byte counter per 64-byte
   granule, as LLVM MemProf), so that the libmemprof runtime can fold the
   accesses of every heap block into its allocation context.  Accesses
   that provably touch only the current thread's stack are not
   instrumented (they can never hit the heap); the proof is the
   base-object analysis below.

   The pass runs after every GIMPLE optimisation (after "asan0"), at every
   -O level, so it never blocks vectorisation or any other optimisation.

   Options, -fplugin-arg-memprof-KEY[=VALUE]:
     callbacks             call runtime hooks instead of inline updates
     reads=0|1             instrument loads (default 1)
     writes=0|1            instrument stores (default 1)
     globals=0|1           instrument accesses to global variables (default 1)
     histogram             per-8-byte saturating counters (runtime histogram=1)
     stack-analysis=none|basic|full
                           none: instrument every access; basic: skip an
                           access whose base is directly a local variable or
                           an alloca; full (default): also through pointer
                           chains, conversions, pointer arithmetic, PHIs and
                           points-to sets holding only this frame's locals
     dump[=details]        write <source>.NNNt.memprof: every access,
                           instrumented or skipped with its reason, and totals
     stats                 one line per translation unit on stderr
     instrument=0|1        instrument accesses (default 1; 0 with use=)
     use=FILE ...          profile feedback: see feedback.cc

   With -flto the pass runs at link time: give -fplugin=memprof.so (and the
   same -fplugin-arg-memprof-... options) to the link command too.  */

#include "gcc-plugin.h"
#include "plugin-version.h"

#include "tree.h"
#include "tree-pass.h"
#include "context.h"
#include "function.h"
#include "basic-block.h"
#include "gimple.h"
#include "gimple-iterator.h"
#include "gimplify.h"
#include "gimplify-me.h"
#include "ssa.h"
#include "tree-ssa-alias.h"
#include "stringpool.h"
#include "cgraph.h"
#include "calls.h"
#include "diagnostic-core.h"
#include "tree-ssa-loop-ivopts.h"
#include "bitmap.h"
#include "ggc.h"
#include "builtins.h"
#include "tree-eh.h"
#include "tree-iterator.h"
#include "tree-pretty-print.h"
#include "gimple-pretty-print.h"
#include "alias.h"
#include "attribs.h"
#include "internal-fn.h"
#include "dumpfile.h"
#include "hash-set.h"

#include "memprof/abi.h"
#include "feedback.h"

int plugin_is_GPL_compatible;

#define PLUGIN_VERSION "0.1.0"

static const char plugin_help[]
    = "Instruments loads and stores for the GCC MemProf heap profiler; link "
      "with `pkg-config --libs memprof`.\n"
      "  -fplugin-arg-memprof-callbacks           call runtime hooks instead "
      "of inline counter updates\n"
      "  -fplugin-arg-memprof-reads=0|1           instrument loads (default "
      "1)\n"
      "  -fplugin-arg-memprof-writes=0|1          instrument stores (default "
      "1)\n"
      "  -fplugin-arg-memprof-globals=0|1         instrument accesses to "
      "global variables (default 1)\n"
      "  -fplugin-arg-memprof-histogram           per-8-byte histogram "
      "counters (run with MEMPROF_OPTIONS=histogram=1)\n"
      "  -fplugin-arg-memprof-stack-analysis=none|basic|full\n"
      "                                           which provably-stack "
      "accesses are skipped (default full)\n"
      "  -fplugin-arg-memprof-dump[=details]      dump file "
      "<source>.NNNt.memprof listing every access\n"
      "  -fplugin-arg-memprof-stats               one summary line per "
      "translation unit on stderr\n"
      "  -fplugin-arg-memprof-instrument=0|1      instrument accesses "
      "(default 1, 0 with use=)\n"
      "With -flto, pass the plugin and its arguments to the link command too.";

/* ---- Options ---- */

enum stack_analysis
{
  STACK_ANALYSIS_NONE,
  STACK_ANALYSIS_BASIC,
  STACK_ANALYSIS_FULL
};

static struct
{
  bool callbacks;
  bool reads, writes, globals;
  bool histogram;
  enum stack_analysis stack_analysis;
  bool stats;
  int instrument; /* 1, 0, or -1: unless -fplugin-arg-memprof-use */
} options = { false, true, true, true, false, STACK_ANALYSIS_FULL, false, -1 };

/* ---- Why an access was or was not instrumented ---- */

enum verdict
{
  INSTRUMENT,
  SKIP_LOCAL_VARIABLE,   /* its base is an automatic variable of this frame */
  SKIP_ALLOCA,           /* a pointer straight from alloca or a VLA */
  SKIP_POINTER_TO_STACK, /* a pointer chain that leads only to the above */
  SKIP_POINTS_TO_STACK,  /* points-to set of this frame's locals only */
  SKIP_READS_DISABLED,   /* reads=0 */
  SKIP_WRITES_DISABLED,  /* writes=0 */
  SKIP_GLOBALS_DISABLED, /* globals=0 */
  SKIP_NOT_ADDRESSABLE,  /* no address can be taken (register-like) */
  VERDICT_COUNT
};

static const char *const verdict_names[VERDICT_COUNT]
    = { "instrumented",         "stack: local variable",
        "stack: alloca",        "stack: pointer to stack",
        "stack: points-to set", "reads disabled",
        "writes disabled",      "globals disabled",
        "not addressable" };

enum access_kind
{
  ACCESS_LOAD,
  ACCESS_STORE,
  ACCESS_RANGE_LOAD,
  ACCESS_RANGE_STORE
};

static const char *const access_kind_names[]
    = { "load", "store", "range load", "range store" };

/* Counts for one function and for the translation unit.  */
struct access_counts
{
  unsigned verdicts[VERDICT_COUNT];
  unsigned loads, stores, ranges; /* instrumented, by kind */
  unsigned asm_statements;        /* inline asm with memory operands */
};

static struct access_counts unit_counts;

/* ---- Trees kept across functions: GC roots ---- */

static GTY (()) tree shadow_base_decl;
static GTY (()) tree counter_type;
static GTY (()) tree counter_pointer_type;
static GTY (()) tree load_hook_decl;
static GTY (()) tree store_hook_decl;
static GTY (()) tree range_hook_decl;
static GTY (()) tree init_decl;

static const struct ggc_root_tab memprof_roots[]
    = { { &shadow_base_decl, 1, sizeof (tree), &gt_ggc_mx_tree_node,
          &gt_pch_nx_tree_node },
        { &counter_type, 1, sizeof (tree), &gt_ggc_mx_tree_node,
          &gt_pch_nx_tree_node },
        { &counter_pointer_type, 1, sizeof (tree), &gt_ggc_mx_tree_node,
          &gt_pch_nx_tree_node },
        { &load_hook_decl, 1, sizeof (tree), &gt_ggc_mx_tree_node,
          &gt_pch_nx_tree_node },
        { &store_hook_decl, 1, sizeof (tree), &gt_ggc_mx_tree_node,
          &gt_pch_nx_tree_node },
        { &range_hook_decl, 1, sizeof (tree), &gt_ggc_mx_tree_node,
          &gt_pch_nx_tree_node },
        { &init_decl, 1, sizeof (tree), &gt_ggc_mx_tree_node,
          &gt_pch_nx_tree_node },
        LAST_GGC_ROOT_TAB };

/* A declaration of the runtime function NAME of type FNTYPE, with its
   assembler name fixed so that no front end mangles it.  */
static tree
runtime_function (const char *name, tree fntype)
{
  tree decl = build_fn_decl (name, fntype);
  SET_DECL_ASSEMBLER_NAME (decl, get_identifier (name));
  TREE_NOTHROW (decl) = 1;
  DECL_ATTRIBUTES (decl)
      = tree_cons (get_identifier ("leaf"), NULL_TREE, DECL_ATTRIBUTES (decl));
  return decl;
}

static void
build_runtime_decls (void)
{
  if (shadow_base_decl != NULL_TREE)
    return;
  /* The shadow base: an external uintptr_t the runtime sets at start-up. */
  shadow_base_decl = build_decl (BUILTINS_LOCATION, VAR_DECL,
                                 get_identifier (MEMPROF_SHADOW_BASE_NAME),
                                 pointer_sized_int_node);
  TREE_PUBLIC (shadow_base_decl) = 1;
  DECL_EXTERNAL (shadow_base_decl) = 1;
  TREE_STATIC (shadow_base_decl) = 1;
  DECL_ARTIFICIAL (shadow_base_decl) = 1;
  DECL_IGNORED_P (shadow_base_decl) = 1;
  TREE_USED (shadow_base_decl) = 1;
  SET_DECL_ASSEMBLER_NAME (shadow_base_decl,
                           get_identifier (MEMPROF_SHADOW_BASE_NAME));

  /* Counters get a type of their own in an alias set of their own, as
     asan's shadow does: alias analysis then knows a counter update cannot
     change the program's data.  */
  counter_type = build_distinct_type_copy (
      options.histogram ? unsigned_char_type_node : uint64_type_node);
  TYPE_ALIAS_SET (counter_type) = new_alias_set ();
  counter_pointer_type = build_pointer_type (counter_type);

  tree hook_type
      = build_function_type_list (void_type_node, ptr_type_node, NULL_TREE);
  load_hook_decl = runtime_function (
      options.histogram ? MEMPROF_HISTOGRAM_LOAD_NAME : MEMPROF_LOAD_NAME,
      hook_type);
  store_hook_decl = runtime_function (
      options.histogram ? MEMPROF_HISTOGRAM_STORE_NAME : MEMPROF_STORE_NAME,
      hook_type);
  range_hook_decl = runtime_function (
      MEMPROF_RANGE_ACCESS_NAME,
      build_function_type_list (void_type_node, const_ptr_type_node,
                                size_type_node, NULL_TREE));
  init_decl = runtime_function (
      MEMPROF_INIT_NAME,
      build_function_type_list (void_type_node, unsigned_type_node, NULL_TREE));
}

/* ---- Base-object analysis: is an access provably on this stack? ---- */

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
  if (SSA_NAME_IS_DEFAULT_DEF (pointer))
    return INSTRUMENT;
  def = SSA_NAME_DEF_STMT (pointer);

  if (gphi *phi = dyn_cast<gphi *> (def))
    {
      enum verdict result = SKIP_POINTER_TO_STACK;
      if (gimple_phi_num_args (phi) == 0)
        return INSTRUMENT;
      for (unsigned i = 0; i < gimple_phi_num_args (phi); i++)
        {
          result
              = both_stack (result, address_proof (gimple_phi_arg_def (phi, i),
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
          address_proof (gimple_assign_rhs2 (def), visited, depth + 1),
          address_proof (gimple_assign_rhs3 (def), visited, depth + 1));
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

/* The DECL_PT_UIDs of this frame's storage, for the points-to test.  */
static bitmap
frame_decl_uids (void)
{
  bitmap uids = BITMAP_ALLOC (NULL);
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
  return uids;
}

/* GCC's points-to solution for POINTER (computed at -O1 and above): stack
   when it names only variables of this frame.  Heap objects are fake
   variables that are not frame decls, so a pointer that may reach the
   heap never passes; neither does one that may point anywhere, to
   globals, or to escaped memory.  */
static bool
points_only_to_frame (tree pointer, bitmap *frame_uids)
{
  struct ptr_info_def *info;
  struct pt_solution *pt;

  if (TREE_CODE (pointer) != SSA_NAME
      || (info = SSA_NAME_PTR_INFO (pointer)) == NULL)
    return false;
  pt = &info->pt;
  if (pt->anything || pt->nonlocal || pt->escaped || pt->ipa_escaped
      || pt->vars_contains_nonlocal || pt->vars_contains_escaped_heap
      || pt->vars == NULL || bitmap_empty_p (pt->vars))
    return false;
  if (*frame_uids == NULL)
    *frame_uids = frame_decl_uids ();
  return !bitmap_intersect_compl_p (pt->vars, *frame_uids);
}

/* Is the memory that REF (a reference, or ADDRESS when REF is NULL: the
   pointer of a range or atomic access) designates provably on this
   thread's stack?  */
static enum verdict
stack_verdict (tree ref, tree address, bitmap *frame_uids)
{
  tree pointer;

  if (options.stack_analysis == STACK_ANALYSIS_NONE)
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
  if (options.stack_analysis == STACK_ANALYSIS_BASIC)
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
  if (points_only_to_frame (pointer, frame_uids))
    return SKIP_POINTS_TO_STACK;
  return INSTRUMENT;
}

/* ---- Finding the accesses of a function ---- */

struct memory_access
{
  gimple *stmt;
  tree ref;     /* the reference, or NULL for a range or pointer access */
  tree address; /* for range and pointer accesses */
  tree length;  /* for ranges */
  enum access_kind kind;
};

/* Does T designate memory (as opposed to a register or a constant)?  */
static bool
is_memory_reference (tree t)
{
  if (TREE_CODE (t) == WITH_SIZE_EXPR)
    t = TREE_OPERAND (t, 0);
  if (TREE_CODE (t) == ADDR_EXPR || TREE_CODE (t) == SSA_NAME
      || is_gimple_min_invariant (t) || TREE_CODE (t) == CONSTRUCTOR)
    return false;
  tree base = get_base_address (t);
  if (base == NULL_TREE)
    return false;
  if (DECL_P (base))
    return !is_gimple_reg (base)
           && !(VAR_P (base) && DECL_HARD_REGISTER (base));
  return TREE_CODE (base) == MEM_REF || TREE_CODE (base) == TARGET_MEM_REF
         || TREE_CODE (base) == STRING_CST;
}

static void
add_reference (vec<memory_access> *accesses, gimple *stmt, tree ref,
               enum access_kind kind)
{
  if (TREE_CODE (ref) == WITH_SIZE_EXPR)
    ref = TREE_OPERAND (ref, 0);
  memory_access a = { stmt, ref, NULL_TREE, NULL_TREE, kind };
  accesses->safe_push (a);
}

static void
add_pointer_access (vec<memory_access> *accesses, gimple *stmt, tree address,
                    tree length, enum access_kind kind)
{
  memory_access a = { stmt, NULL_TREE, address, length, kind };
  accesses->safe_push (a);
}

/* Is FNDECL one of the __atomic_* or __sync_* builtins that access the
   memory their first argument points to?  */
static bool
is_atomic_memory_builtin (tree fndecl, bool *is_load)
{
  const char *name = IDENTIFIER_POINTER (DECL_NAME (fndecl));
  static const char *const no_memory[]
      = { "__atomic_thread_fence", "__atomic_signal_fence",
          "__atomic_always_lock_free", "__atomic_is_lock_free",
          "__sync_synchronize" };

  if (!startswith (name, "__atomic_") && !startswith (name, "__sync_"))
    return false;
  for (const char *other : no_memory)
    if (strcmp (name, other) == 0)
      return false;
  *is_load = startswith (name, "__atomic_load");
  return true;
}

/* The memory a call touches: mem builtins as ranges, atomics as one
   access at their pointer, a result stored to memory, and aggregates
   passed by value.  */
static void
collect_call (vec<memory_access> *accesses, gcall *call)
{
  tree fndecl = gimple_call_fndecl (call);

  if (gimple_call_internal_p (call))
    switch (gimple_call_internal_fn (call))
      {
      case IFN_ATOMIC_COMPARE_EXCHANGE:
      case IFN_ATOMIC_BIT_TEST_AND_SET:
      case IFN_ATOMIC_BIT_TEST_AND_COMPLEMENT:
      case IFN_ATOMIC_BIT_TEST_AND_RESET:
        add_pointer_access (accesses, call, gimple_call_arg (call, 0),
                            NULL_TREE, ACCESS_STORE);
        return;
      case IFN_ATOMIC_ADD_FETCH_CMP_0:
      case IFN_ATOMIC_SUB_FETCH_CMP_0:
      case IFN_ATOMIC_AND_FETCH_CMP_0:
      case IFN_ATOMIC_OR_FETCH_CMP_0:
      case IFN_ATOMIC_XOR_FETCH_CMP_0:
        add_pointer_access (accesses, call, gimple_call_arg (call, 1),
                            NULL_TREE, ACCESS_STORE);
        return;
      case IFN_MASK_LOAD:
        add_pointer_access (accesses, call, gimple_call_arg (call, 0),
                            NULL_TREE, ACCESS_LOAD);
        return;
      case IFN_MASK_STORE:
        add_pointer_access (accesses, call, gimple_call_arg (call, 0),
                            NULL_TREE, ACCESS_STORE);
        return;
      default:
        break;
      }
  else if (fndecl != NULL_TREE && gimple_call_builtin_p (call, BUILT_IN_NORMAL))
    {
      bool is_load;
      switch (DECL_FUNCTION_CODE (fndecl))
        {
        case BUILT_IN_MEMCPY:
        case BUILT_IN_MEMMOVE:
        case BUILT_IN_MEMPCPY:
        case BUILT_IN_MEMCPY_CHK:
        case BUILT_IN_MEMMOVE_CHK:
        case BUILT_IN_MEMPCPY_CHK:
          add_pointer_access (accesses, call, gimple_call_arg (call, 0),
                              gimple_call_arg (call, 2), ACCESS_RANGE_STORE);
          add_pointer_access (accesses, call, gimple_call_arg (call, 1),
                              gimple_call_arg (call, 2), ACCESS_RANGE_LOAD);
          return;
        case BUILT_IN_MEMSET:
        case BUILT_IN_MEMSET_CHK:
          add_pointer_access (accesses, call, gimple_call_arg (call, 0),
                              gimple_call_arg (call, 2), ACCESS_RANGE_STORE);
          return;
        case BUILT_IN_BZERO:
          add_pointer_access (accesses, call, gimple_call_arg (call, 0),
                              gimple_call_arg (call, 1), ACCESS_RANGE_STORE);
          return;
        case BUILT_IN_BCOPY:
          add_pointer_access (accesses, call, gimple_call_arg (call, 1),
                              gimple_call_arg (call, 2), ACCESS_RANGE_STORE);
          add_pointer_access (accesses, call, gimple_call_arg (call, 0),
                              gimple_call_arg (call, 2), ACCESS_RANGE_LOAD);
          return;
        default:
          if (gimple_call_num_args (call) > 0
              && POINTER_TYPE_P (TREE_TYPE (gimple_call_arg (call, 0)))
              && is_atomic_memory_builtin (fndecl, &is_load))
            {
              add_pointer_access (accesses, call, gimple_call_arg (call, 0),
                                  NULL_TREE,
                                  is_load ? ACCESS_LOAD : ACCESS_STORE);
              return;
            }
          break;
        }
    }

  /* A result stored to memory is a store -- unless the callee writes it
     there itself (the return-slot optimisation), where its own stores are
     counted.  Aggregates passed by value are loads.  */
  if (gimple_store_p (call) && is_memory_reference (gimple_call_lhs (call))
      && !gimple_call_return_slot_opt_p (call))
    add_reference (accesses, call, gimple_call_lhs (call), ACCESS_STORE);
  for (unsigned i = 0; i < gimple_call_num_args (call); i++)
    {
      tree arg = gimple_call_arg (call, i);
      if (!is_gimple_reg (arg) && is_memory_reference (arg))
        add_reference (accesses, call, arg, ACCESS_LOAD);
    }
}

/* Does the inline asm ASM have memory operands?  They are left alone
   (their size and meaning are the asm's secret) and counted.  */
static bool
asm_has_memory_operands (gasm *asm_stmt)
{
  for (unsigned i = 0; i < gimple_asm_noutputs (asm_stmt); i++)
    if (is_memory_reference (TREE_VALUE (gimple_asm_output_op (asm_stmt, i))))
      return true;
  for (unsigned i = 0; i < gimple_asm_ninputs (asm_stmt); i++)
    if (is_memory_reference (TREE_VALUE (gimple_asm_input_op (asm_stmt, i))))
      return true;
  return false;
}

/* Every memory access of the current function, in statement order.
   Nothing is de-duplicated: two loads of one address are two accesses. */
static void
collect_accesses (vec<memory_access> *accesses, struct access_counts *counts)
{
  basic_block bb;

  FOR_EACH_BB_FN (bb, cfun)
  for (gimple_stmt_iterator gsi = gsi_start_bb (bb); !gsi_end_p (gsi);
       gsi_next (&gsi))
    {
      gimple *stmt = gsi_stmt (gsi);
      if (is_gimple_debug (stmt) || gimple_clobber_p (stmt))
        continue;
      if (gimple_assign_single_p (stmt))
        {
          /* An aggregate copy *p = *q is both a store and a load.  */
          if (gimple_store_p (stmt)
              && is_memory_reference (gimple_assign_lhs (stmt)))
            add_reference (accesses, stmt, gimple_assign_lhs (stmt),
                           ACCESS_STORE);
          /* (gimple_assign_load_p would miss a string literal.)  */
          if (is_memory_reference (gimple_assign_rhs1 (stmt)))
            add_reference (accesses, stmt, gimple_assign_rhs1 (stmt),
                           ACCESS_LOAD);
        }
      else if (gcall *call = dyn_cast<gcall *> (stmt))
        collect_call (accesses, call);
      else if (gasm *asm_stmt = dyn_cast<gasm *> (stmt))
        {
          if (asm_has_memory_operands (asm_stmt))
            counts->asm_statements++;
        }
    }
}

/* ---- Deciding ---- */

/* The object that holds REF when REF is a bit-field (whose own address
   cannot be taken), else REF.  */
static tree
bit_field_container (tree ref)
{
  if ((TREE_CODE (ref) == COMPONENT_REF
       && DECL_BIT_FIELD_TYPE (TREE_OPERAND (ref, 1)))
      || TREE_CODE (ref) == BIT_FIELD_REF)
    return TREE_OPERAND (ref, 0);
  return ref;
}

static bool
is_load_kind (enum access_kind kind)
{
  return kind == ACCESS_LOAD || kind == ACCESS_RANGE_LOAD;
}

/* Is REF's base a global variable (or a string literal)?  */
static bool
reference_is_global (tree ref)
{
  tree base = ref ? get_base_address (ref) : NULL_TREE;
  if (base == NULL_TREE)
    return false;
  if (TREE_CODE (base) == STRING_CST)
    return true;
  return DECL_P (base) && is_global_var (base);
}

static enum verdict
decide (const memory_access *a, bitmap *frame_uids)
{
  enum verdict verdict;

  if (is_load_kind (a->kind) && !options.reads)
    return SKIP_READS_DISABLED;
  if (!is_load_kind (a->kind) && !options.writes)
    return SKIP_WRITES_DISABLED;
  if (!options.globals && reference_is_global (a->ref))
    return SKIP_GLOBALS_DISABLED;
  verdict = stack_verdict (a->ref, a->address, frame_uids);
  if (verdict != INSTRUMENT)
    return verdict;
  if (a->ref != NULL_TREE
      && may_be_nonaddressable_p (bit_field_container (a->ref)))
    return SKIP_NOT_ADDRESSABLE;
  return INSTRUMENT;
}

/* ---- Emitting the instrumentation ---- */

/* The reference whose address is the first byte REF accesses: a
   bit-field becomes the byte-aligned field that holds it (or, without
   one, the record), so that it is counted at the bytes that hold it.
   A BIT_FIELD_REF is handled by reference_address.  */
static tree
addressable_reference (tree ref)
{
  if (TREE_CODE (ref) == COMPONENT_REF
      && DECL_BIT_FIELD_TYPE (TREE_OPERAND (ref, 1)))
    {
      tree representative
          = DECL_BIT_FIELD_REPRESENTATIVE (TREE_OPERAND (ref, 1));
      if (representative == NULL_TREE)
        return bit_field_container (ref);
      return build3 (COMPONENT_REF, TREE_TYPE (representative),
                     TREE_OPERAND (ref, 0), representative,
                     TREE_OPERAND (ref, 2));
    }
  return bit_field_container (ref);
}

/* Global variables whose address only the current function's counting
   code takes.  The address needs TREE_ADDRESSABLE, but the alias
   analysis of every function compiled after this one reads the flag, and
   GCC then optimizes them differently: at -O2 it elided a new/delete
   pair around a replaced operator delete that writes a file-local static
   (g++.dg/eh/delete1.C).  The flag is cleared again once the function is
   assembled (restore_addressable).  */
static vec<tree> globals_made_addressable;

/* The address of the first byte REF accesses, as GIMPLE in SEQ.  */
static tree
reference_address (tree ref, gimple_seq *seq)
{
  tree object = addressable_reference (ref);
  tree base = get_base_address (object);
  if (base && DECL_P (base) && !TREE_ADDRESSABLE (base))
    {
      mark_addressable (base);
      if (is_global_var (base))
        globals_made_addressable.safe_push (base);
    }
  tree address = build_fold_addr_expr (unshare_expr (object));
  if (TREE_CODE (ref) == BIT_FIELD_REF)
    address = fold_build_pointer_plus_hwi (
        address, tree_to_shwi (TREE_OPERAND (ref, 2)) / BITS_PER_UNIT);
  return force_gimple_operand (address, seq, true, NULL_TREE);
}

static tree
append_assign (gimple_seq *seq, location_t loc, enum tree_code code, tree type,
               tree op1, tree op2 = NULL_TREE)
{
  tree lhs = make_ssa_name (type);
  gassign *g = op2 ? gimple_build_assign (lhs, code, op1, op2)
                   : gimple_build_assign (lhs, code, op1);
  gimple_set_location (g, loc);
  gimple_seq_add_stmt (seq, g);
  return lhs;
}

/* counter = shadow_for (address); *counter += 1 -- or, in histogram
   mode, a saturating byte increment without a branch.  */
static void
append_counter_update (gimple_seq *seq, location_t loc, tree address, tree base)
{
  tree uptr = pointer_sized_int_node;
  tree a = append_assign (seq, loc, NOP_EXPR, uptr, address);
  tree index;
  if (options.histogram)
    index = append_assign (seq, loc, RSHIFT_EXPR, uptr, a,
                           build_int_cst (uptr, MEMPROF_HISTOGRAM_SCALE));
  else
    {
      tree granule = append_assign (
          seq, loc, BIT_AND_EXPR, uptr, a,
          build_int_cst (uptr, -(HOST_WIDE_INT) MEMPROF_GRANULE_SIZE));
      index = append_assign (seq, loc, RSHIFT_EXPR, uptr, granule,
                             build_int_cst (uptr, MEMPROF_SHADOW_SCALE));
    }
  tree sum = append_assign (seq, loc, PLUS_EXPR, uptr, index, base);
  tree counter = append_assign (seq, loc, NOP_EXPR, counter_pointer_type, sum);
  tree mem = build2 (MEM_REF, counter_type, counter,
                     build_int_cst (counter_pointer_type, 0));
  /* The shadow is always mapped.  */
  TREE_THIS_NOTRAP (mem) = 1;
  tree old_value = make_ssa_name (counter_type);
  gassign *load = gimple_build_assign (old_value, mem);
  gimple_set_location (load, loc);
  gimple_seq_add_stmt (seq, load);
  tree increment = build_int_cst (counter_type, 1);
  if (options.histogram)
    {
      tree below_max
          = append_assign (seq, loc, NE_EXPR, boolean_type_node, old_value,
                           build_int_cst (counter_type, MEMPROF_HISTOGRAM_MAX));
      increment = append_assign (seq, loc, NOP_EXPR, counter_type, below_max);
    }
  tree new_value
      = append_assign (seq, loc, PLUS_EXPR, counter_type, old_value, increment);
  gassign *store = gimple_build_assign (unshare_expr (mem), new_value);
  gimple_set_location (store, loc);
  gimple_seq_add_stmt (seq, store);
}

static void
append_call (gimple_seq *seq, location_t loc, tree fndecl, tree arg1,
             tree arg2 = NULL_TREE)
{
  gcall *call = arg2 ? gimple_build_call (fndecl, 2, arg1, arg2)
                     : gimple_build_call (fndecl, 1, arg1);
  gimple_set_location (call, loc);
  gimple_seq_add_stmt (seq, call);
}

/* Insert the counting code for A before its statement.  BASE is the
   function's shadow-base SSA name (unused in callback mode).  */
static void
instrument_access (const memory_access *a, tree base)
{
  gimple_seq seq = NULL;
  location_t loc = gimple_location (a->stmt);
  gimple_stmt_iterator gsi = gsi_for_stmt (a->stmt);
  tree address;

  if (a->ref != NULL_TREE)
    address = reference_address (a->ref, &seq);
  else
    address = force_gimple_operand (
        fold_convert (ptr_type_node, unshare_expr (a->address)), &seq, true,
        NULL_TREE);

  if (a->kind == ACCESS_RANGE_LOAD || a->kind == ACCESS_RANGE_STORE)
    {
      /* Call arguments must be GIMPLE values: convert the length first.  */
      tree length = force_gimple_operand (
          fold_convert (size_type_node, unshare_expr (a->length)), &seq, true,
          NULL_TREE);
      append_call (&seq, loc, range_hook_decl, address, length);
    }
  else if (options.callbacks)
    append_call (&seq, loc,
                 a->kind == ACCESS_LOAD ? load_hook_decl : store_hook_decl,
                 address);
  else
    append_counter_update (&seq, loc, address, base);
  gsi_insert_seq_before (&gsi, seq, GSI_SAME_STMT);
}

/* base = __memprof_shadow_base, once, on the function's entry edge.  */
static tree
load_shadow_base (void)
{
  tree base = make_ssa_name (pointer_sized_int_node);
  gassign *g = gimple_build_assign (base, shadow_base_decl);
  gimple_set_location (g, DECL_SOURCE_LOCATION (current_function_decl));
  gsi_insert_on_edge_immediate (
      single_succ_edge (ENTRY_BLOCK_PTR_FOR_FN (cfun)), g);
  return base;
}

/* ---- Dump ---- */

static void
dump_access (const memory_access *a, enum verdict verdict)
{
  expanded_location where = expand_location (gimple_location (a->stmt));
  fprintf (dump_file, ";; memprof: %s %s ",
           verdict == INSTRUMENT ? "instrument" : "skip",
           access_kind_names[a->kind]);
  print_generic_expr (dump_file, a->ref ? a->ref : a->address, TDF_SLIM);
  if (verdict != INSTRUMENT)
    fprintf (dump_file, " (%s)", verdict_names[verdict]);
  if (where.file)
    fprintf (dump_file, " at %s:%d:%d", where.file, where.line, where.column);
  fputc ('\n', dump_file);
  if (dump_flags & TDF_DETAILS)
    {
      fprintf (dump_file, ";;   in ");
      print_gimple_stmt (dump_file, a->stmt, 0, TDF_SLIM);
    }
}

static void
dump_totals (const struct access_counts *counts)
{
  unsigned skipped = 0;
  for (int v = SKIP_LOCAL_VARIABLE; v <= SKIP_POINTS_TO_STACK; v++)
    skipped += counts->verdicts[v];
  fprintf (dump_file,
           ";; memprof: totals for %s: %u instrumented (%u loads, %u stores, "
           "%u ranges), %u skipped as stack (%u local variable, %u alloca, "
           "%u pointer to stack, %u points-to), %u filtered, %u not "
           "addressable, %u asm with memory operands\n",
           function_name (cfun), counts->verdicts[INSTRUMENT], counts->loads,
           counts->stores, counts->ranges, skipped,
           counts->verdicts[SKIP_LOCAL_VARIABLE], counts->verdicts[SKIP_ALLOCA],
           counts->verdicts[SKIP_POINTER_TO_STACK],
           counts->verdicts[SKIP_POINTS_TO_STACK],
           counts->verdicts[SKIP_READS_DISABLED]
               + counts->verdicts[SKIP_WRITES_DISABLED]
               + counts->verdicts[SKIP_GLOBALS_DISABLED],
           counts->verdicts[SKIP_NOT_ADDRESSABLE], counts->asm_statements);
}

/* ---- The pass ---- */

static bool
function_is_runtime (void)
{
  const char *name = IDENTIFIER_POINTER (DECL_NAME (current_function_decl));
  return startswith (name, "__memprof_");
}

static unsigned int
instrument_function (void)
{
  auto_vec<memory_access> accesses;
  struct access_counts counts;
  bitmap frame_uids = NULL;
  auto_vec<enum verdict> verdicts;
  tree base = NULL_TREE;
  bool any = false;

  memset (&counts, 0, sizeof counts);
  if (function_is_runtime ())
    return 0;
  build_runtime_decls ();
  collect_accesses (&accesses, &counts);

  /* Decide everything before changing anything: the analysis reads the
     statements as the optimisers left them.  */
  for (const memory_access &a : accesses)
    {
      enum verdict verdict = decide (&a, &frame_uids);
      verdicts.safe_push (verdict);
      counts.verdicts[verdict]++;
      if (verdict == INSTRUMENT)
        {
          any = true;
          if (a.kind == ACCESS_LOAD)
            counts.loads++;
          else if (a.kind == ACCESS_STORE)
            counts.stores++;
          else
            counts.ranges++;
        }
      if (dump_file)
        dump_access (&a, verdict);
    }
  if (frame_uids)
    BITMAP_FREE (frame_uids);

  if (any && !options.callbacks)
    base = load_shadow_base ();
  for (unsigned i = 0; i < accesses.length (); i++)
    if (verdicts[i] == INSTRUMENT)
      instrument_access (&accesses[i], base);

  if (dump_file)
    dump_totals (&counts);
  for (int v = 0; v < VERDICT_COUNT; v++)
    unit_counts.verdicts[v] += counts.verdicts[v];
  unit_counts.loads += counts.loads;
  unit_counts.stores += counts.stores;
  unit_counts.ranges += counts.ranges;
  unit_counts.asm_statements += counts.asm_statements;
  return 0;
}

static const pass_data memprof_pass_data = {
  GIMPLE_PASS,
  "memprof",
  OPTGROUP_NONE,
  TV_NONE,
  PROP_ssa | PROP_cfg | PROP_gimple_leh,
  0,
  0,
  0,
  TODO_update_ssa,
};

class memprof_pass : public gimple_opt_pass
{
public:
  memprof_pass (gcc::context *context)
      : gimple_opt_pass (memprof_pass_data, context)
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
    /* Feedback first: it rewrites allocation calls; instrumenting then
       counts the accesses of the rewritten function.  */
    if (feedback_enabled ())
      feedback_function ();
    return options.instrument ? instrument_function () : 0;
  }

  opt_pass *
  clone () final override
  {
    return new memprof_pass (m_ctxt);
  }
};

/* ---- Translation-unit hooks ---- */

/* A constructor that starts the runtime (idempotent) and checks that it
   implements this plugin's ABI.  It runs before any constructor of
   default priority.  */
static void
build_module_constructor (void)
{
  tree body = NULL_TREE;
  build_runtime_decls ();
  append_to_statement_list (
      build_call_expr (init_decl, 1,
                       build_int_cst (unsigned_type_node, MEMPROF_ABI_VERSION)),
      &body);
  cgraph_build_static_cdtor ('I', body, MAX_RESERVED_INIT_PRIORITY - 1);
}

/* Before IPA, in a compilation and in lto1 without partitions.  The new
   function is only queued here; ipa_passes lowers it to SSA before the
   regular IPA passes.  */
static void
add_module_constructor (void *, void *)
{
  /* Writing LTO bytecode: the pass runs in lto1 at link time, and this
     callback with it.  A constructor added here would go through
     free_lang_data, which it does not survive.  An LTRANS unit gets its
     constructor after IPA (add_ltrans_module_constructor).  */
  if (seen_error () || (flag_generate_lto && !in_lto_p) || flag_ltrans
      || !options.instrument)
    return;
  build_module_constructor ();
}

/* After IPA, in an LTRANS unit (lto1 -fltrans, one partition of a
   -flto link).  No IPA pass runs there between the two hooks, so nothing
   would lower a constructor queued before IPA; the late IPA passes would
   then meet a defined function without a GIMPLE body, and IPA PTA
   (-fipa-pta) crashes on it.  Here the symbol table is in IPA_SSA state:
   process_new_functions gimplifies the constructor and runs the early
   local passes on it, as ipa_passes does in a compilation.  */
static void
add_ltrans_module_constructor (void *, void *)
{
  if (seen_error () || !flag_ltrans || !options.instrument)
    return;
  build_module_constructor ();
  symtab->process_new_functions ();
}

/* After all passes of a function, its RTL assembled: the globals its
   counting code made addressable are as the program left them, for the
   functions compiled next.  */
static void
restore_addressable (void *, void *)
{
  for (tree decl : globals_made_addressable)
    TREE_ADDRESSABLE (decl) = 0;
  globals_made_addressable.truncate (0);
}

static void
print_unit_stats (void *, void *)
{
  unsigned skipped = 0, total = 0;
  if (!options.stats || seen_error () || !options.instrument)
    return;
  for (int v = 0; v < VERDICT_COUNT; v++)
    total += unit_counts.verdicts[v];
  for (int v = SKIP_LOCAL_VARIABLE; v <= SKIP_POINTS_TO_STACK; v++)
    skipped += unit_counts.verdicts[v];
  fprintf (
      stderr,
      "memprof: %s: %u accesses, %u instrumented (%u loads, %u stores, "
      "%u ranges), %u skipped as stack (%u local variable, %u alloca, "
      "%u pointer to stack, %u points-to), %u filtered, %u not "
      "addressable, %u asm statements with memory operands left alone\n",
      main_input_filename ? main_input_filename : "<stdin>", total,
      unit_counts.verdicts[INSTRUMENT], unit_counts.loads, unit_counts.stores,
      unit_counts.ranges, skipped, unit_counts.verdicts[SKIP_LOCAL_VARIABLE],
      unit_counts.verdicts[SKIP_ALLOCA],
      unit_counts.verdicts[SKIP_POINTER_TO_STACK],
      unit_counts.verdicts[SKIP_POINTS_TO_STACK],
      unit_counts.verdicts[SKIP_READS_DISABLED]
          + unit_counts.verdicts[SKIP_WRITES_DISABLED]
          + unit_counts.verdicts[SKIP_GLOBALS_DISABLED],
      unit_counts.verdicts[SKIP_NOT_ADDRESSABLE], unit_counts.asm_statements);
}

/* ---- Arguments ---- */

static const char valid_arguments[]
    = "callbacks, reads=0|1, writes=0|1, globals=0|1, histogram, "
      "stack-analysis=none|basic|full, dump[=details], stats, ";

static bool
parse_flag (const char *key, const char *value, bool *result)
{
  if (value == NULL || strcmp (value, "1") == 0)
    *result = true;
  else if (strcmp (value, "0") == 0)
    *result = false;
  else
    {
      error ("memprof: bad value %qs in %<-fplugin-arg-memprof-%s=%s%>: "
             "expected 0 or 1",
             value, key, value);
      return false;
    }
  return true;
}

static bool
parse_arguments (struct plugin_name_args *info, const char **dump_switch)
{
  bool ok = true;
  for (int i = 0; i < info->argc; i++)
    {
      const char *key = info->argv[i].key;
      const char *value = info->argv[i].value;
      if (strcmp (key, "callbacks") == 0)
        ok &= parse_flag (key, value, &options.callbacks);
      else if (strcmp (key, "reads") == 0)
        ok &= parse_flag (key, value, &options.reads);
      else if (strcmp (key, "writes") == 0)
        ok &= parse_flag (key, value, &options.writes);
      else if (strcmp (key, "globals") == 0)
        ok &= parse_flag (key, value, &options.globals);
      else if (strcmp (key, "histogram") == 0)
        ok &= parse_flag (key, value, &options.histogram);
      else if (strcmp (key, "stats") == 0)
        ok &= parse_flag (key, value, &options.stats);
      else if (strcmp (key, "instrument") == 0)
        {
          bool instrument;
          ok &= parse_flag (key, value, &instrument);
          options.instrument = instrument;
        }
      else if (feedback_argument (key, value, &ok))
        ;
      else if (strcmp (key, "stack-analysis") == 0)
        {
          if (value && strcmp (value, "none") == 0)
            options.stack_analysis = STACK_ANALYSIS_NONE;
          else if (value && strcmp (value, "basic") == 0)
            options.stack_analysis = STACK_ANALYSIS_BASIC;
          else if (value && strcmp (value, "full") == 0)
            options.stack_analysis = STACK_ANALYSIS_FULL;
          else
            {
              error ("memprof: bad value %qs in "
                     "%<-fplugin-arg-memprof-stack-analysis%>: expected "
                     "none, basic or full",
                     value ? value : "");
              ok = false;
            }
        }
      else if (strcmp (key, "dump") == 0)
        {
          if (value == NULL)
            *dump_switch = "tree-memprof";
          else if (strcmp (value, "details") == 0)
            *dump_switch = "tree-memprof-details";
          else
            {
              error ("memprof: bad value %qs in %<-fplugin-arg-memprof-dump%>: "
                     "expected no value or %<details%>",
                     value);
              ok = false;
            }
        }
      else
        {
          error ("memprof: unknown option %<-fplugin-arg-memprof-%s%>; the "
                 "options are: %s%s",
                 key, valid_arguments, feedback_argument_names);
          ok = false;
        }
    }
  return ok;
}

int
plugin_init (struct plugin_name_args *info, struct plugin_gcc_version *version)
{
  static struct plugin_info plugin_info = { PLUGIN_VERSION, NULL };
  const char *dump_switch = NULL;

  if (!plugin_default_version_check (version, &gcc_version))
    {
      error ("memprof: this plugin was built for GCC %s (%s) but is loaded "
             "by GCC %s (%s); rebuild it with this compiler",
             gcc_version.basever, gcc_version.datestamp, version->basever,
             version->datestamp);
      return 1;
    }
  if (!parse_arguments (info, &dump_switch))
    return 1;
  /* Profile feedback alone does not instrument, as -fprofile-use does
     not; -fplugin-arg-memprof-instrument asks for both.  */
  if (options.instrument < 0)
    options.instrument = !feedback_enabled ();
  if (feedback_enabled () && !feedback_start (info->base_name))
    return 1;
  plugin_info.help = concat (plugin_help, "\n", feedback_help, NULL);

  register_callback (info->base_name, PLUGIN_INFO, NULL, &plugin_info);
  register_callback (info->base_name, PLUGIN_REGISTER_GGC_ROOTS, NULL,
                     (void *) memprof_roots);

  /* After "asan0", at every level: after all GIMPLE optimisations, so the
     counter updates never stop one (measured: a vectorisable loop runs
     7x slower when instrumented at asan's earlier position).  */
  struct register_pass_info pass_info;
  pass_info.pass = new memprof_pass (g);
  pass_info.reference_pass_name = "asan0";
  pass_info.ref_pass_instance_number = 1;
  pass_info.pos_op = PASS_POS_INSERT_AFTER;
  register_callback (info->base_name, PLUGIN_PASS_MANAGER_SETUP, NULL,
                     &pass_info);
  /* GCC parses -fdump-tree-* before plugins load; the dump of a plugin
     pass is switched on here instead.  */
  if (dump_switch != NULL)
    {
      g->get_dumps ()->dump_switch_p (dump_switch);
      if (feedback_enabled ())
        g->get_dumps ()->dump_switch_p ("ipa-memprof-clone");
    }

  register_callback (info->base_name, PLUGIN_ALL_IPA_PASSES_START,
                     add_module_constructor, NULL);
  register_callback (info->base_name, PLUGIN_ALL_IPA_PASSES_END,
                     add_ltrans_module_constructor, NULL);
  register_callback (info->base_name, PLUGIN_ALL_PASSES_END,
                     restore_addressable, NULL);
  register_callback (info->base_name, PLUGIN_FINISH_UNIT, print_unit_stats,
                     NULL);
  return 0;
}
