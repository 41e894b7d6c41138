/* The instrumentation emitter: what the plugin adds to the program.

   - The runtime's declarations (include/memprof/abi.h): the shadow base,
     a global the runtime sets before any instrumented code runs, and the
     hooks of callback mode, the range hook and the init call.
   - Per instrumented access, before its statement: the inline update
     counter = shadow_base + ((address & -granule) >> scale); *counter += 1
     (abi.h's mapping, LLVM MemProf's), or in histogram mode a saturating
     byte increment without a branch; or a call of the load/store hook in
     callback mode; a range (memcpy...) is always one call.
   - Per translation unit, a constructor that starts the runtime and
     checks its ABI version before any constructor of default priority.

   The counters have a type of their own in an alias set of their own, so
   alias analysis knows an update never changes the program's data.  */

#include "gcc-plugin.h"

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
#include "stringpool.h"
#include "cgraph.h"
#include "diagnostic-core.h"
#include "ggc.h"
#include "tree-iterator.h"
#include "alias.h"
#include "attribs.h"

#include "memprof/abi.h"
#include "plugin.h"
#include "accesses.h"
#include "emit.h"
#include "bursts.h"
#include "stack_checks.h"

/* ---- The runtime's declarations: trees kept across functions ---- */

static GTY (()) tree shadow_base_decl;
static GTY (()) tree counter_type;
static GTY (()) tree counter_pointer_type;
static GTY (()) tree load_hook_decl;
static GTY (()) tree store_hook_decl;
static GTY (()) tree range_hook_decl;
static GTY (()) tree init_decl;
static GTY (()) tree range_weighted_hook_decl;

const struct ggc_root_tab emit_roots[]
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
        { &range_weighted_hook_decl, 1, sizeof (tree), &gt_ggc_mx_tree_node,
          &gt_pch_nx_tree_node },
        LAST_GGC_ROOT_TAB };

/* See emit.h.  */
tree
runtime_function (const char *name, tree fntype)
{
  tree decl = build_fn_decl (name, fntype);
  SET_DECL_ASSEMBLER_NAME (decl, get_identifier (name));
  TREE_NOTHROW (decl) = 1;
  DECL_ATTRIBUTES (decl)
      = tree_cons (get_identifier ("leaf"), NULL_TREE, DECL_ATTRIBUTES (decl));
  return decl;
}

/* See emit.h.  */
tree
runtime_variable_decl (const char *name, tree type)
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

/* See emit.h.  */
void
build_runtime_decls (void)
{
  if (shadow_base_decl != NULL_TREE)
    return;
  /* The shadow base: an external uintptr_t the runtime sets at start-up. */
  shadow_base_decl = runtime_variable_decl (MEMPROF_SHADOW_BASE_NAME,
                                            pointer_sized_int_node);

  /* Counters get a type of their own in an alias set of their own, as
     asan's shadow does: alias analysis then knows a counter update cannot
     change the program's data.  */
  counter_type = build_distinct_type_copy (
      plugin_options.histogram ? unsigned_char_type_node : uint64_type_node);
  TYPE_ALIAS_SET (counter_type) = new_alias_set ();
  counter_pointer_type = build_pointer_type (counter_type);

  tree hook_type
      = build_function_type_list (void_type_node, ptr_type_node, NULL_TREE);
  load_hook_decl
      = runtime_function (plugin_options.histogram ? MEMPROF_HISTOGRAM_LOAD_NAME
                                                   : MEMPROF_LOAD_NAME,
                          hook_type);
  store_hook_decl = runtime_function (plugin_options.histogram
                                          ? MEMPROF_HISTOGRAM_STORE_NAME
                                          : MEMPROF_STORE_NAME,
                                      hook_type);
  range_hook_decl = runtime_function (
      MEMPROF_RANGE_ACCESS_NAME,
      build_function_type_list (void_type_node, const_ptr_type_node,
                                size_type_node, NULL_TREE));
  range_weighted_hook_decl = runtime_function (
      MEMPROF_RANGE_ACCESS_WEIGHTED_NAME,
      build_function_type_list (void_type_node, const_ptr_type_node,
                                size_type_node, long_unsigned_type_node,
                                NULL_TREE));
  init_decl = runtime_function (
      MEMPROF_INIT_NAME,
      build_function_type_list (void_type_node, unsigned_type_node,
                                unsigned_type_node, NULL_TREE));
}

/* ---- Counter updates and hook calls ---- */

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

/* See emit.h.  */
tree
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

/* counter = shadow_for (address); *counter += COUNT, or the SSA value
   COUNT_VALUE when given -- or, in histogram mode, a saturating byte
   increment without a branch (COUNT is 1).  */
static void
append_counter_update (gimple_seq *seq, location_t loc, tree address, tree base,
                       unsigned count, tree count_value = NULL_TREE)
{
  tree uptr = pointer_sized_int_node;
  tree a = append_assign (seq, loc, NOP_EXPR, uptr, address);
  tree index;
  if (plugin_options.histogram)
    index = append_assign (seq, loc, RSHIFT_EXPR, uptr, a,
                           build_int_cst (uptr, MEMPROF_HISTOGRAM_SCALE));
  else
    {
#if MEMPROF_GRANULE_SHIFT >= MEMPROF_SHADOW_SCALE
      /* (address & -granule) >> scale, written as the granule's number
         times the shadow bytes per granule: the same value, which x86
         addresses as base + number * 8 -- a shift and the update, where
         a mask and a shift took three instructions and a register for
         the mask.  */
      tree number = append_assign (seq, loc, RSHIFT_EXPR, uptr, a,
                                   build_int_cst (uptr, MEMPROF_GRANULE_SHIFT));
      index = append_assign (
          seq, loc, MULT_EXPR, uptr, number,
          build_int_cst (uptr, (HOST_WIDE_INT) 1 << (MEMPROF_GRANULE_SHIFT
                                                     - MEMPROF_SHADOW_SCALE)));
#else
      tree granule = append_assign (
          seq, loc, BIT_AND_EXPR, uptr, a,
          build_int_cst (uptr, -(HOST_WIDE_INT) MEMPROF_GRANULE_SIZE));
      index = append_assign (seq, loc, RSHIFT_EXPR, uptr, granule,
                             build_int_cst (uptr, MEMPROF_SHADOW_SCALE));
#endif
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
  tree increment = build_int_cst (counter_type, count);
  if (count_value != NULL_TREE)
    increment = append_assign (seq, loc, NOP_EXPR, counter_type, count_value);
  if (plugin_options.histogram)
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

/* The address of the first byte A accesses, as GIMPLE in SEQ.  */
static tree
access_address (const memory_access *a, gimple_seq *seq)
{
  if (a->ref != NULL_TREE)
    return reference_address (a->ref, seq);
  return force_gimple_operand (
      fold_convert (ptr_type_node, unshare_expr (a->address)), seq, true,
      NULL_TREE);
}

/* See emit.h.  */
void
append_deferred_update (gimple_seq *seq, const memory_access *a, tree base,
                        tree count_value)
{
  location_t loc = gimple_location (a->stmt);
  tree uptr = pointer_sized_int_node;
  tree address
      = append_assign (seq, loc, NOP_EXPR, uptr, access_address (a, seq));
  /* address & -(COUNT != 0): where the access never ran, the address may
     be anything, and 0 is added at address 0, whose counter is mapped.  */
  tree ran = append_assign (seq, loc, NE_EXPR, boolean_type_node, count_value,
                            build_zero_cst (TREE_TYPE (count_value)));
  tree mask = append_assign (seq, loc, NOP_EXPR, uptr, ran);
  mask = append_assign (seq, loc, NEGATE_EXPR, uptr, mask);
  address = append_assign (seq, loc, BIT_AND_EXPR, uptr, address, mask);
  append_counter_update (seq, loc, address, base, 0, count_value);
}

/* See emit.h.  */
void
instrument_access (const memory_access *a, tree base, unsigned count)
{
  gimple_seq seq = NULL;
  location_t loc = gimple_location (a->stmt);
  gimple_stmt_iterator gsi = gsi_for_stmt (a->stmt);
  tree address = access_address (a, &seq);

  if (a->kind == ACCESS_RANGE_LOAD || a->kind == ACCESS_RANGE_STORE)
    {
      /* Call arguments must be GIMPLE values: convert the length first.  */
      tree length = force_gimple_operand (
          fold_convert (size_type_node, unshare_expr (a->length)), &seq, true,
          NULL_TREE);
      if (count > 1)
        {
          /* Sampled (bursts.cc): each of its steps counts COUNT.  */
          gcall *call = gimple_build_call (
              range_weighted_hook_decl, 3, address, length,
              build_int_cst (long_unsigned_type_node, count));
          gimple_set_location (call, loc);
          gimple_seq_add_stmt (&seq, call);
        }
      else
        append_call (&seq, loc, range_hook_decl, address, length);
    }
  else if (plugin_options.callbacks)
    append_call (&seq, loc,
                 a->kind == ACCESS_LOAD ? load_hook_decl : store_hook_decl,
                 address);
  else
    append_counter_update (&seq, loc, address, base, count);
  if (updates_guarded ())
    insert_in_bursts_only (a->stmt, seq);
  else if (!insert_unless_on_stack (a, seq))
    gsi_insert_seq_before (&gsi, seq, GSI_SAME_STMT);
}

/* See emit.h.  */
tree
load_shadow_base (void)
{
  tree base = make_ssa_name (pointer_sized_int_node);
  gassign *g = gimple_build_assign (base, shadow_base_decl);
  gimple_set_location (g, DECL_SOURCE_LOCATION (current_function_decl));
  gsi_insert_on_edge_immediate (
      single_succ_edge (ENTRY_BLOCK_PTR_FOR_FN (cfun)), g);
  return base;
}

/* See emit.h.  */
void
restore_addressable (void *, void *)
{
  for (tree decl : globals_made_addressable)
    TREE_ADDRESSABLE (decl) = 0;
  globals_made_addressable.truncate (0);
}

/* ---- The start-up constructor ---- */

/* Compiling for -flto: the pass and the constructor run in lto1 at link
   time, and only when the link command loads the plugin too.  Leave a
   weak byte in the unit's bytecode that any link emits, so that the
   runtime can tell a program linked without the plugin (nothing
   instrumented, no __memprof_init) from one never built with it.  */
static void
add_lto_unit_marker (void)
{
  /* Top-level asm: streamed with the bytecode and emitted by whatever
     compiles it at link time, where a variable nothing refers to would
     be dropped.  .ifndef keeps one copy when lto1 puts several units in
     one partition, a COMDAT group one for the whole program.  */
  static const char marker[]
      = "\t.ifndef " MEMPROF_LTO_UNIT_NAME "\n"
        "\t.pushsection .data." MEMPROF_LTO_UNIT_NAME
        ",\"awG\",@progbits," MEMPROF_LTO_UNIT_NAME ",comdat\n"
        "\t.weak " MEMPROF_LTO_UNIT_NAME "\n"
        "\t.type " MEMPROF_LTO_UNIT_NAME ", @object\n"
        "\t.size " MEMPROF_LTO_UNIT_NAME ", 1\n" MEMPROF_LTO_UNIT_NAME ":\n"
        "\t.byte 1\n"
        "\t.popsection\n"
        "\t.endif";
  symtab->finalize_toplevel_asm (build_string (strlen (marker), marker));
}

/* A constructor that starts the runtime (idempotent), checks that it
   implements this plugin's ABI and tells it the module's mode
   (histogram, callbacks), so that a run in the wrong mode is followed or
   refused, never miscounted.  It runs before any constructor of default
   priority.  */
static void
build_module_constructor (void)
{
  tree body = NULL_TREE;
  build_runtime_decls ();
  unsigned mode = (plugin_options.histogram ? MEMPROF_MODE_HISTOGRAM : 0)
                  | (plugin_options.callbacks ? MEMPROF_MODE_CALLBACKS : 0);
  append_to_statement_list (
      build_call_expr (init_decl, 2,
                       build_int_cst (unsigned_type_node, MEMPROF_ABI_VERSION),
                       build_int_cst (unsigned_type_node, mode)),
      &body);
  cgraph_build_static_cdtor ('I', body, MAX_RESERVED_INIT_PRIORITY - 1);
}

/* Before IPA, in a compilation and in lto1 without partitions.  The new
   function is only queued here; ipa_passes lowers it to SSA before the
   regular IPA passes.  */
void
add_module_constructor (void *, void *)
{
  /* Writing LTO bytecode: the pass runs in lto1 at link time, and this
     callback with it.  A constructor added here would go through
     free_lang_data, which it does not survive.  An LTRANS unit gets its
     constructor after IPA (add_ltrans_module_constructor).  */
  if (seen_error () || flag_ltrans || !plugin_options.instrument)
    return;
  if (flag_generate_lto && !in_lto_p)
    {
      add_lto_unit_marker ();
      return;
    }
  build_module_constructor ();
}

/* After IPA, in an LTRANS unit (lto1 -fltrans, one partition of a
   -flto link).  No IPA pass runs there between the two hooks, so nothing
   would lower a constructor queued before IPA; the late IPA passes would
   then meet a defined function without a GIMPLE body, and IPA PTA
   (-fipa-pta) crashes on it.  Here the symbol table is in IPA_SSA state:
   process_new_functions gimplifies the constructor and runs the early
   local passes on it, as ipa_passes does in a compilation.  */
void
add_ltrans_module_constructor (void *, void *)
{
  if (seen_error () || !flag_ltrans || !plugin_options.instrument)
    return;
  build_module_constructor ();
  symtab->process_new_functions ();
}
