/* Finding the memory references of a function in GIMPLE: every load and
   store of an assignment (an aggregate copy is both), the memory a call
   touches (mem* builtins as ranges, atomics as one access at their
   pointer, a result stored to memory, aggregates passed by value), and
   the inline asm statements with memory operands (counted, left alone).
   GCC's own asan.cc and tsan.cc find references the same way.  Nothing is
   de-duplicated: two loads of one address are two accesses.  */

#include "gcc-plugin.h"

#include "tree.h"
#include "function.h"
#include "basic-block.h"
#include "gimple.h"
#include "gimple-iterator.h"
#include "ssa.h"
#include "builtins.h"
#include "internal-fn.h"

#include "plugin.h"
#include "accesses.h"

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

/* See accesses.h.  */
void
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

/* See accesses.h.  */
tree
bit_field_container (tree ref)
{
  if ((TREE_CODE (ref) == COMPONENT_REF
       && DECL_BIT_FIELD_TYPE (TREE_OPERAND (ref, 1)))
      || TREE_CODE (ref) == BIT_FIELD_REF)
    return TREE_OPERAND (ref, 0);
  return ref;
}
