/* memcmp calls of instrumented code, sent straight to the runtime's
   counting entry.

   The plugin counts no memcmp itself: how many bytes a comparison reads
   (to the first difference) is known only when it has run.  libmemprof.so
   interposes memcmp and counts them (runtime/interceptors.c), but an
   interposed memcmp knows nothing of its caller: each call goes through
   the interposer's jump and entry, then asks whether its return address
   is in the runtime's own code (the thread's last verdict, or a scan of
   the code ranges), then looks the C library's memcmp up.  A std::map
   keyed by strings makes tens of millions of such calls from inlined
   std::string comparisons.  A call of instrumented code needs none of
   that: this file makes it a call of __memprof_memcmp (include/memprof/
   abi.h), which returns the C library's result and counts the same
   bytes, WEIGHT times, as the interposer would for the same call.

   Only calls that stay calls are redirected: GCC expands a memcmp inline
   (no library call, and nothing counted by anyone) when its length is a
   constant it can compare by pieces, or on x86 with
   -minline-all-stringops (the cmpmem pattern, "repz cmpsb").  A call
   with a length known only at run time and without that option is
   always a call of memcmp on x86-64 (builtins.cc, expand_builtin_memcmp;
   i386-expand.cc, ix86_expand_cmpstrn_or_cmpmem); on other targets the
   calls are left alone.  Functions copied for sampled access counting
   (bursts.cc) are left alone too: their library calls keep the
   interposer's weight of bursts as before.  */

#include "gcc-plugin.h"

#include "tree.h"
#include "function.h"
#include "basic-block.h"
#include "gimple.h"
#include "gimple-iterator.h"
#include "ssa.h"
#include "stringpool.h"
#include "ggc.h"
#include "options.h"

#include "memprof/abi.h"
#include "plugin.h"
#include "accesses.h"
#include "emit.h"
#include "library_calls.h"

static GTY (()) tree memcmp_entry_decl;

const struct ggc_root_tab library_calls_roots[]
    = { { &memcmp_entry_decl, 1, sizeof (tree), &gt_ggc_mx_tree_node,
          &gt_pch_nx_tree_node },
        LAST_GGC_ROOT_TAB };

/* Does the target expand some memcmp calls of run-time length inline in
   the current function?  */
static bool
target_may_inline_memcmp (void)
{
#ifdef MASK_INLINE_ALL_STRINGOPS
  /* The target's flags are the current function's here (GCC switches
     them with cfun): a target attribute's -minline-all-stringops too.  */
  return (global_options.x_target_flags & MASK_INLINE_ALL_STRINGOPS) != 0;
#else
  return true;
#endif
}

/* Will CALL be a call of the C library's memcmp?  */
static bool
is_library_memcmp_call (gcall *call)
{
  if (!gimple_call_builtin_p (call, BUILT_IN_MEMCMP)
      && !gimple_call_builtin_p (call, BUILT_IN_MEMCMP_EQ))
    return false;
  return TREE_CODE (gimple_call_arg (call, 2)) != INTEGER_CST;
}

/* __memprof_memcmp, declared once per compilation.  */
static tree
memcmp_entry (void)
{
  if (memcmp_entry_decl == NULL_TREE)
    {
      tree library = builtin_decl_explicit (BUILT_IN_MEMCMP);
      tree type = build_function_type_list (
          integer_type_node, const_ptr_type_node, const_ptr_type_node,
          size_type_node, build_pointer_type (TREE_TYPE (library)), NULL_TREE);
      memcmp_entry_decl = runtime_function (MEMPROF_MEMCMP_NAME, type);
      /* As memcmp for the optimisers of RTL: it reads memory and changes
         none of the program's (its counters are the runtime's business,
         as the interposed memcmp's are).  */
      DECL_PURE_P (memcmp_entry_decl) = DECL_PURE_P (library);
    }
  return memcmp_entry_decl;
}

/* See library_calls.h.  */
unsigned
redirect_library_calls (void)
{
  unsigned redirected = 0;
  if (target_may_inline_memcmp ())
    return 0;
  basic_block bb;
  FOR_EACH_BB_FN (bb, cfun)
  for (gimple_stmt_iterator gsi = gsi_start_bb (bb); !gsi_end_p (gsi);
       gsi_next (&gsi))
    {
      gcall *call = dyn_cast<gcall *> (gsi_stmt (gsi));
      if (call == NULL || !is_library_memcmp_call (call))
        continue;
      /* memcmp as this module binds it: the C library's (through the
         runtime's interposition), or the program's own, which the
         runtime then calls instead.  The same decl GCC would call for
         the builtin (memcmp_eq included).  */
      tree library = builtin_decl_implicit (BUILT_IN_MEMCMP);
      if (library == NULL_TREE)
        continue;
      TREE_ADDRESSABLE (library) = 1;
      gcall *entry = gimple_build_call (
          memcmp_entry (), 4, gimple_call_arg (call, 0),
          gimple_call_arg (call, 1), gimple_call_arg (call, 2),
          build_fold_addr_expr (library));
      gimple_call_set_lhs (entry, gimple_call_lhs (call));
      gimple_set_location (entry, gimple_location (call));
      gimple_set_block (entry, gimple_block (call));
      gimple_call_set_tail (entry, gimple_call_tail_p (call));
      gimple_set_vuse (entry, gimple_vuse (call));
      gsi_replace (&gsi, entry, false);
      redirected++;
    }
  return redirected;
}
