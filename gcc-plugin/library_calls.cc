/* memcmp, strlen, strcmp and strncmp calls of instrumented code, sent
   straight to the runtime's counting entries.

   The plugin counts neither itself: how many bytes a comparison reads
   (to the first difference) or a strlen (to the NUL) is known only when
   it has run.  libmemprof.so interposes both and counts them
   (runtime/interceptors.c), but an interposed function knows nothing of
   its caller: each call goes through the interposer's jump and entry,
   then asks whether its return address is in the runtime's own code
   (the thread's last verdict, or a scan of the code ranges), then looks
   the C library's function up.  A std::map keyed by strings makes tens
   of millions of memcmp calls from inlined std::string comparisons.  A
   call of instrumented code needs none of that: this file makes it a
   call of __memprof_memcmp, __memprof_strlen, __memprof_strcmp or
   __memprof_strncmp (include/memprof/abi.h),
   which returns the C library's result and counts the same bytes, as
   many times, as the interposer would for the same call.  The last
   argument is the function as the module binds it: a program's own
   memcmp or strlen is called instead, nothing counted, as before.

   Only calls that stay calls are redirected: GCC expands a memcmp inline
   (no library call, and nothing counted by anyone) when its length is a
   constant it can compare by pieces, a strlen when it knows the string
   (c_strlen), and on x86 either with -minline-all-stringops (the cmpmem
   pattern, "repz cmpsb"; the strlen pattern).  Otherwise, on x86-64,
   they are always calls of the library (builtins.cc,
   expand_builtin_memcmp and expand_builtin_strlen; i386-expand.cc,
   ix86_expand_cmpstrn_or_cmpmem and ix86_expand_strlen); on other
   targets the calls are left alone.  strcmp and strncmp are expanded
   inline by a rule of their own (string_compare_may_be_inlined).  Functions
   copied for sampled access counting (bursts.cc) are left alone too:
   their library calls keep the interposer's weight of bursts as
   before.  */

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
#include "builtins.h"
#include "fold-const.h"
#include "dumpfile.h"

#include "memprof/abi.h"
#include "plugin.h"
#include "accesses.h"
#include "emit.h"
#include "library_calls.h"

/* The library functions redirected, and the runtime's entries for them,
   declared once per compilation.  */
static const enum built_in_function redirected_functions[]
    = { BUILT_IN_MEMCMP, BUILT_IN_STRLEN, BUILT_IN_STRCMP, BUILT_IN_STRNCMP };
static const char *const entry_names[]
    = { MEMPROF_MEMCMP_NAME, MEMPROF_STRLEN_NAME, MEMPROF_STRCMP_NAME,
        MEMPROF_STRNCMP_NAME };
#define REDIRECTED_COUNT 4
static GTY (()) tree entry_decls[REDIRECTED_COUNT];

const struct ggc_root_tab library_calls_roots[]
    = { { &entry_decls[0], REDIRECTED_COUNT, sizeof (tree),
          &gt_ggc_mx_tree_node, &gt_pch_nx_tree_node },
        LAST_GGC_ROOT_TAB };

/* Does the target expand some memcmp or strlen calls inline in the
   current function, whatever their arguments?  */
static bool
target_may_inline_calls (void)
{
#ifdef MASK_INLINE_ALL_STRINGOPS
  /* The target's flags are the current function's here (GCC switches
     them with cfun): a target attribute's -minline-all-stringops too.  */
  return (global_options.x_target_flags & MASK_INLINE_ALL_STRINGOPS) != 0;
#else
  return true;
#endif
}

/* Could GCC expand CALL, a strcmp or (BOUNDED) a strncmp, inline?  Only
   when an argument is a constant string and the bytes to compare are
   few: builtins.cc, inline_expand_builtin_bytecmp, whose rule this is
   (the number of bytes is the shorter constant string's length with its
   NUL, at most strncmp's bound, against --param
   builtin-string-cmp-inline-length).  Otherwise the call stays a call on
   x86-64 (expand_builtin_strcmp and expand_builtin_strncmp: the cmpstrn
   pattern needs -minline-all-stringops), perhaps with strncmp's bound
   lowered to the constant string's length: the same bytes are read.  */
static bool
string_compare_may_be_inlined (gcall *call, bool bounded)
{
  unsigned HOST_WIDE_INT length1 = 0, length2 = 0;
  const char *bytes1 = getbyterep (gimple_call_arg (call, 0), &length1);
  const char *bytes2 = getbyterep (gimple_call_arg (call, 1), &length2);
  if (bytes1 == NULL && bytes2 == NULL)
    return false;
  if (bytes1 != NULL)
    length1 = strnlen (bytes1, length1) + 1;
  if (bytes2 != NULL)
    length2 = strnlen (bytes2, length2) + 1;
  unsigned HOST_WIDE_INT bound = length1 == 0                        ? length2
                                 : length2 == 0 || length2 > length1 ? length1
                                                                     : length2;
  if (bounded)
    {
      tree limit = gimple_call_arg (call, 2);
      if (!tree_fits_uhwi_p (limit))
        return false;
      bound = MIN (bound, tree_to_uhwi (limit));
    }
  return bound
         <= (unsigned HOST_WIDE_INT) param_builtin_string_cmp_inline_length;
}

/* Which library function CALL will call, when it stays a call: memcmp
   of a length known only at run time (BUILT_IN_MEMCMP_EQ is the same
   call when only its zero matters); strlen of a string whose length
   GCC cannot work out (expand_builtin_strlen's c_strlen); strcmp and
   strncmp that GCC does not expand inline; else END_BUILTINS.  */
static enum built_in_function
library_call_of (gcall *call)
{
  if (gimple_call_builtin_p (call, BUILT_IN_MEMCMP)
      || gimple_call_builtin_p (call, BUILT_IN_MEMCMP_EQ))
    return TREE_CODE (gimple_call_arg (call, 2)) != INTEGER_CST
               ? BUILT_IN_MEMCMP
               : END_BUILTINS;
  if (gimple_call_builtin_p (call, BUILT_IN_STRLEN))
    {
      tree text = gimple_call_arg (call, 0);
      return c_strlen (text, 0) == NULL_TREE && c_strlen (text, 1) == NULL_TREE
                 ? BUILT_IN_STRLEN
                 : END_BUILTINS;
    }
  if (gimple_call_builtin_p (call, BUILT_IN_STRCMP))
    return string_compare_may_be_inlined (call, false) ? END_BUILTINS
                                                       : BUILT_IN_STRCMP;
  if (gimple_call_builtin_p (call, BUILT_IN_STRNCMP))
    return string_compare_may_be_inlined (call, true) ? END_BUILTINS
                                                      : BUILT_IN_STRNCMP;
  return END_BUILTINS;
}

/* The runtime's entry for the library's function CODE: its arguments,
   then a pointer to the function as the caller binds it.  */
static tree
runtime_entry (enum built_in_function code, tree library)
{
  unsigned which = 0;
  while (redirected_functions[which] != code)
    which++;
  if (entry_decls[which] == NULL_TREE)
    {
      tree library_type = TREE_TYPE (library);
      auto_vec<tree, 4> arguments;
      for (tree a = TYPE_ARG_TYPES (library_type);
           a != NULL_TREE && TREE_VALUE (a) != void_type_node;
           a = TREE_CHAIN (a))
        arguments.safe_push (TREE_VALUE (a));
      arguments.safe_push (build_pointer_type (library_type));
      tree type = build_function_type_array (
          TREE_TYPE (library_type), arguments.length (), arguments.address ());
      entry_decls[which] = runtime_function (entry_names[which], type);
      /* As the library's function for the optimisers of RTL: it reads
         memory and changes none of the program's (its counters are the
         runtime's business, as the interposed function's are).  */
      DECL_PURE_P (entry_decls[which]) = DECL_PURE_P (library);
    }
  return entry_decls[which];
}

/* See library_calls.h.  */
unsigned
redirect_library_calls (void)
{
  unsigned redirected[REDIRECTED_COUNT] = {}, total = 0;
  if (target_may_inline_calls ())
    return 0;
  basic_block bb;
  FOR_EACH_BB_FN (bb, cfun)
  for (gimple_stmt_iterator gsi = gsi_start_bb (bb); !gsi_end_p (gsi);
       gsi_next (&gsi))
    {
      gcall *call = dyn_cast<gcall *> (gsi_stmt (gsi));
      enum built_in_function code
          = call != NULL ? library_call_of (call) : END_BUILTINS;
      /* The function as this module binds it: the C library's (through
         the runtime's interposition), or the program's own, which the
         runtime then calls instead.  The same decl GCC would call for
         the builtin: the call's own, or for memcmp_eq memcmp's.  The
         call's own matters in a -fPIC unit built with
         -fno-semantic-interposition that defines memcmp: GCC calls its
         local alias (memcmp.localalias), the unit's own memcmp, whereas
         memcmp by name is whichever the dynamic linker finds first (the
         C library's, for a library dlopen'ed with RTLD_LOCAL).  */
      tree library
          = code != END_BUILTINS ? builtin_decl_implicit (code) : NULL_TREE;
      if (library == NULL_TREE)
        continue;
      if (gimple_call_builtin_p (call, code))
        library = gimple_call_fndecl (call);
      TREE_ADDRESSABLE (library) = 1;
      auto_vec<tree, 4> arguments;
      for (unsigned i = 0; i < gimple_call_num_args (call); i++)
        arguments.safe_push (gimple_call_arg (call, i));
      arguments.safe_push (build_fold_addr_expr (library));
      gcall *entry
          = gimple_build_call_vec (runtime_entry (code, library), arguments);
      gimple_call_set_lhs (entry, gimple_call_lhs (call));
      gimple_set_location (entry, gimple_location (call));
      gimple_set_block (entry, gimple_block (call));
      gimple_call_set_tail (entry, gimple_call_tail_p (call));
      gimple_set_vuse (entry, gimple_vuse (call));
      gsi_replace (&gsi, entry, false);
      for (unsigned i = 0; i < REDIRECTED_COUNT; i++)
        if (redirected_functions[i] == code)
          redirected[i]++;
      total++;
    }
  for (unsigned i = 0; i < REDIRECTED_COUNT && dump_file; i++)
    if (redirected[i] > 0)
      fprintf (dump_file, ";; memprof: %u %s call(s) to %s\n", redirected[i],
               entry_names[i] + strlen ("__memprof_"), entry_names[i]);
  return total;
}
