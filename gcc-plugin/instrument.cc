/* The instrumentation pass: for every function with a body, at every
   optimisation level, after every GIMPLE optimisation ("asan0"), find its
   memory accesses (accesses.cc), decide for each whether it is counted
   (the options, then the stack analysis: stack_analysis.cc), and emit the
   counting code (emit.cc).  Everything is decided before anything is
   changed: the analysis reads the statements as the optimisers left
   them.  With -fplugin-arg-memprof-dump the pass writes every access and
   its verdict; with -fplugin-arg-memprof-stats, a line per unit.  */

#include "gcc-plugin.h"

#include "tree.h"
#include "tree-pass.h"
#include "context.h"
#include "function.h"
#include "basic-block.h"
#include "gimple.h"
#include "gimple-iterator.h"
#include "ssa.h"
#include "cgraph.h"
#include "attribs.h"
#include "diagnostic-core.h"
#include "tree-ssa-loop-ivopts.h"
#include "bitmap.h"
#include "tree-pretty-print.h"
#include "gimple-pretty-print.h"
#include "dumpfile.h"

#include "plugin.h"
#include "accesses.h"
#include "stack_analysis.h"
#include "emit.h"
#include "feedback.h"
#include "instrument.h"
#include "sibcalls.h"
#include "combine.h"
#include "bursts.h"
#include "stack_checks.h"
#include "library_calls.h"

static const char *const verdict_names[VERDICT_COUNT]
    = { "instrumented",
        "stack: local variable",
        "stack: alloca",
        "stack: pointer to stack",
        "stack: points-to set",
        "stack: pointer parameter: callers' frames",
        "stack: points-to set: other frames",
        "reads disabled",
        "writes disabled",
        "globals disabled",
        "not addressable" };

static const char *const access_kind_names[]
    = { "load", "store", "range load", "range store" };

static struct access_counts unit_counts;

/* ---- Deciding ---- */

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

  if (is_load_kind (a->kind) && !plugin_options.reads)
    return SKIP_READS_DISABLED;
  if (!is_load_kind (a->kind) && !plugin_options.writes)
    return SKIP_WRITES_DISABLED;
  if (!plugin_options.globals && reference_is_global (a->ref))
    return SKIP_GLOBALS_DISABLED;
  verdict = stack_verdict (a->ref, a->address, plugin_options.stack_analysis,
                           frame_uids);
  if (verdict != INSTRUMENT)
    return verdict;
  if (a->ref != NULL_TREE
      && may_be_nonaddressable_p (bit_field_container (a->ref)))
    return SKIP_NOT_ADDRESSABLE;
  return INSTRUMENT;
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
  for (int v = SKIP_LOCAL_VARIABLE; v <= LAST_STACK_VERDICT; v++)
    skipped += counts->verdicts[v];
  fprintf (dump_file,
           ";; memprof: totals for %s: %u instrumented (%u loads, %u stores, "
           "%u ranges), %u skipped as stack (%u local variable, %u alloca, "
           "%u pointer to stack, %u points-to, %u pointer parameter: callers' "
           "frames, %u points-to other frames), %u filtered, %u not "
           "addressable, %u asm with memory operands, %u counter updates "
           "(%u combined, %u counted in registers over loops, %u at loop "
           "exits)\n",
           function_name (cfun), counts->verdicts[INSTRUMENT], counts->loads,
           counts->stores, counts->ranges, skipped,
           counts->verdicts[SKIP_LOCAL_VARIABLE], counts->verdicts[SKIP_ALLOCA],
           counts->verdicts[SKIP_POINTER_TO_STACK],
           counts->verdicts[SKIP_POINTS_TO_STACK],
           counts->verdicts[SKIP_CALLERS_FRAMES],
           counts->verdicts[SKIP_POINTS_TO_OTHER_FRAMES],
           counts->verdicts[SKIP_READS_DISABLED]
               + counts->verdicts[SKIP_WRITES_DISABLED]
               + counts->verdicts[SKIP_GLOBALS_DISABLED],
           counts->verdicts[SKIP_NOT_ADDRESSABLE], counts->asm_statements,
           counts->verdicts[INSTRUMENT] - counts->combined
               - counts->in_registers + counts->exit_updates,
           counts->combined, counts->in_registers, counts->exit_updates);
}

/* ---- Sampled access counting (bursts.cc) ---- */

/* Would the function count an access?  Only then is it copied.  */
static bool
function_has_counted_access (void)
{
  auto_vec<memory_access> accesses;
  struct access_counts counts;
  bitmap frame_uids = NULL;
  bool any = false;

  memset (&counts, 0, sizeof counts);
  collect_accesses (&accesses, &counts);
  for (unsigned i = 0; !any && i < accesses.length (); i++)
    any = decide (&accesses[i], &frame_uids) == INSTRUMENT;
  if (frame_uids)
    BITMAP_FREE (frame_uids);
  return any;
}

/* Keep the accesses of the counting copy (its statements are marked).  */
static void
keep_counting_copy (vec<memory_access> *accesses)
{
  unsigned kept = 0;
  for (unsigned i = 0; i < accesses->length (); i++)
    if (in_counting_copy ((*accesses)[i].stmt))
      (*accesses)[kept++] = (*accesses)[i];
  accesses->truncate (kept);
}

/* ---- The pass ---- */

static bool
function_is_runtime (void)
{
  const char *name = IDENTIFIER_POINTER (DECL_NAME (current_function_decl));
  return startswith (name, "__memprof_");
}

/* Whether NODE is an IFUNC resolver: the function an ifunc attribute
   names (GCC's target_clones and target dispatchers included).  */
static bool
is_ifunc_resolver (cgraph_node *node)
{
  ipa_ref *ref;
  for (unsigned i = 0; node->iterate_direct_aliases (i, ref); i++)
    if (ref->referring->ifunc_resolver)
      return true;
  return false;
}

/* How many calls away from a resolver a function is still looked at.  */
#define RESOLVER_CALL_DEPTH 4

/* Whether NODE runs only in IFUNC resolvers: it is one, or a function of
   this unit called directly only, by functions that run only in
   resolvers (DEPTH more calls at most).  GCC expands a function's
   callees before it, so the resolver's call edges are still there.  */
static bool
runs_only_in_resolvers (cgraph_node *node, unsigned depth)
{
  if (is_ifunc_resolver (node))
    return true;
  /* Local, and neither referred to (address taken, aliases) nor kept for
     another reason; not only_called_directly_p, which -O0's
     force_output on every function makes false.  */
  if (depth == 0 || node->callers == NULL || TREE_PUBLIC (node->decl)
      || node->externally_visible || node->address_taken
      || DECL_PRESERVE_P (node->decl) || node->ref_list.referring.length () > 0)
    return false;
  for (cgraph_edge *edge = node->callers; edge != NULL;
       edge = edge->next_caller)
    if (edge->caller == node
        || !runs_only_in_resolvers (edge->caller, depth - 1))
      return false;
  return true;
}

/* An IFUNC resolver runs while the dynamic linker relocates its module:
   in a library that does not need libmemprof.so, possibly before the
   runtime has reserved the shadow (docs/plugin.md, "Code that runs
   before start-up").  It is left uninstrumented, with what was inlined
   into it and the functions of the unit only it calls; they run once.
   Those functions, by DECL_UID: found once the call graph is final,
   before any function is compiled (the late passes of a function drop
   its call edges).  */
static hash_set<int_hash<unsigned, -1U, -2U> > *resolver_only_uids;

/* See instrument.h.  */
void
find_resolver_only_functions (void *, void *)
{
  cgraph_node *node;
  if (resolver_only_uids == NULL)
    resolver_only_uids = new hash_set<int_hash<unsigned, -1U, -2U> >;
  resolver_only_uids->empty ();
  /* Not an inline clone: it shares its declaration with the offline
     function, whose other callers may not be resolvers (the body inlined
     into a resolver is instrumented, or not, with the resolver).  */
  FOR_EACH_DEFINED_FUNCTION (node)
  if (node->inlined_to == NULL
      && runs_only_in_resolvers (node, RESOLVER_CALL_DEPTH))
    resolver_only_uids->add (DECL_UID (node->decl));
}

/* Under -flto the call graph is whole only in WPA: the partitioning may
   put a resolver and a function only it calls in different ltrans units,
   and promote the function (TREE_PUBLIC), whose callers an ltrans unit
   no longer sees.  WPA marks them with this attribute (not one a user
   can write), which goes to the ltrans units with the declaration.  */
static const char resolver_only_attribute[] = "memprof resolver only";

static unsigned int
mark_resolver_only_functions (void)
{
  cgraph_node *node;
  FOR_EACH_DEFINED_FUNCTION (node)
  if (node->inlined_to == NULL
      && runs_only_in_resolvers (node, RESOLVER_CALL_DEPTH)
      && !lookup_attribute (resolver_only_attribute,
                            DECL_ATTRIBUTES (node->decl)))
    DECL_ATTRIBUTES (node->decl)
        = tree_cons (get_identifier (resolver_only_attribute), NULL_TREE,
                     DECL_ATTRIBUTES (node->decl));
  return 0;
}

static const pass_data resolver_only_pass_data = {
  IPA_PASS, "memprof-resolver-only", OPTGROUP_NONE, TV_NONE, 0, 0, 0, 0, 0,
};

class resolver_only_pass : public ipa_opt_pass_d
{
public:
  resolver_only_pass (gcc::context *context)
      : ipa_opt_pass_d (resolver_only_pass_data, context, NULL, NULL, NULL,
                        NULL, NULL, NULL, 0, NULL, NULL)
  {
  }

  /* WPA only: the partitioning follows the regular IPA passes there.  */
  bool
  gate (function *) final override
  {
    return flag_wpa && !seen_error ();
  }

  unsigned int
  execute (function *) final override
  {
    return mark_resolver_only_functions ();
  }
};

/* See instrument.h.  */
opt_pass *
make_resolver_only_pass (gcc::context *context)
{
  return new resolver_only_pass (context);
}

static bool
runs_only_in_resolvers (tree decl)
{
  return (resolver_only_uids != NULL
          && resolver_only_uids->contains (DECL_UID (decl)))
         || lookup_attribute (resolver_only_attribute, DECL_ATTRIBUTES (decl));
}

/* A resolver of a library's unit (-fPIC), or a function only resolvers
   call, that calls a function of its unit that counts accesses: that
   function runs before start-up, and crashes, if the library does not
   need libmemprof.so and the dynamic linker relocates it first.  Said
   once per function, at the call: so a chain of calls from a resolver
   is noted where it first reaches a function that counts.  */
static void
note_counting_callees (void)
{
  cgraph_node *node = cgraph_node::get (current_function_decl);
  if (!flag_pic || flag_pie || node == NULL)
    return;
  bool resolver = is_ifunc_resolver (node);
  /* The body's calls: the late passes may have dropped the call edges.  */
  basic_block bb;
  FOR_EACH_BB_FN (bb, cfun)
  for (gimple_stmt_iterator gsi = gsi_start_bb (bb); !gsi_end_p (gsi);
       gsi_next (&gsi))
    {
      tree fndecl = is_gimple_call (gsi_stmt (gsi))
                        ? gimple_call_fndecl (gsi_stmt (gsi))
                        : NULL_TREE;
      cgraph_node *callee
          = fndecl != NULL_TREE ? cgraph_node::get (fndecl) : NULL;
      if (callee == NULL)
        continue;
      callee = callee->ultimate_alias_target ();
      if (!callee->definition || runs_only_in_resolvers (callee->decl))
        continue;
      inform (gimple_location (gsi_stmt (gsi)),
              resolver ? "memprof: IFUNC resolver %qD calls %qD, which "
                         "counts accesses: link the library with the "
                         "runtime (%<$(pkg-config --libs memprof)%>) so that "
                         "the dynamic linker sets it up first"
                       : "memprof: %qD, run by IFUNC resolvers, calls %qD, "
                         "which counts accesses: link the library with the "
                         "runtime (%<$(pkg-config --libs memprof)%>) so that "
                         "the dynamic linker sets it up first",
              node->decl, callee->decl);
      return;
    }
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
  if (runs_only_in_resolvers (current_function_decl))
    {
      note_counting_callees ();
      return 0;
    }
  build_runtime_decls ();
  unsigned kept_frames = keep_allocation_frames ();
  if (dump_file && kept_frames > 0)
    fprintf (dump_file,
             ";; memprof: %u tail call(s) that may allocate kept as calls\n",
             kept_frames);
  bool counting_copy = false;
  if (access_sampling_enabled ())
    {
      counting_copy = function_has_counted_access () && make_burst_copies ();
      if (!counting_copy)
        add_ticks ();
    }
  /* memcmp and strlen calls straight to the runtime's counting
     entries; not in the copies of sampled counting, whose library calls
     the bursts weigh.  */
  if (!access_sampling_enabled ())
    redirect_library_calls ();
  prepare_loop_counting ();
  collect_accesses (&accesses, &counts);
  if (counting_copy)
    keep_counting_copy (&accesses);

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

  /* Accesses that provably hit one counter share one update.  */
  auto_vec<unsigned> update_counts;
  counts.combined
      = combine_counter_updates (&accesses, &verdicts, &update_counts);
  /* Sampled: each access the counting copy counts stands for RATE; a
     function left whole counts in bursts only, RATE each too.  */
  bool guarded = access_sampling_enabled () && !counting_copy;
  guard_updates (guarded);
  if (access_sampling_enabled ())
    for (unsigned &count : update_counts)
      count *= access_weight ();

  if (any && !plugin_options.callbacks)
    base = load_shadow_base ();
  /* Accesses whose address a loop never changes: counted in registers. */
  if (any && !guarded)
    counts.in_registers = count_in_loop_registers (&accesses, &update_counts,
                                                   base, &counts.exit_updates);
  stack_checks_begin ();
  for (unsigned i = 0; i < accesses.length (); i++)
    if (update_counts[i] > 0)
      instrument_access (&accesses[i], base, update_counts[i]);
  stack_checks_end ();
  guard_updates (false);
  if (counting_copy && base != NULL_TREE)
    load_shadow_base_where_used (base);
  finish_loop_counting ();

  if (dump_file)
    dump_totals (&counts);
  for (int v = 0; v < VERDICT_COUNT; v++)
    unit_counts.verdicts[v] += counts.verdicts[v];
  unit_counts.loads += counts.loads;
  unit_counts.stores += counts.stores;
  unit_counts.ranges += counts.ranges;
  unit_counts.asm_statements += counts.asm_statements;
  unit_counts.combined += counts.combined;
  unit_counts.in_registers += counts.in_registers;
  unit_counts.exit_updates += counts.exit_updates;
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
    return plugin_options.instrument ? instrument_function () : 0;
  }

  opt_pass *
  clone () final override
  {
    return new memprof_pass (m_ctxt);
  }
};

/* See instrument.h.  */
opt_pass *
make_instrument_pass (gcc::context *context)
{
  return new memprof_pass (context);
}

/* ---- Per unit ---- */

/* See instrument.h.  */
void
print_unit_stats (void *, void *)
{
  unsigned skipped = 0, total = 0;
  if (!plugin_options.stats || seen_error () || !plugin_options.instrument)
    return;
  for (int v = 0; v < VERDICT_COUNT; v++)
    total += unit_counts.verdicts[v];
  for (int v = SKIP_LOCAL_VARIABLE; v <= LAST_STACK_VERDICT; v++)
    skipped += unit_counts.verdicts[v];
  fprintf (
      stderr,
      "memprof: %s: %u accesses, %u instrumented (%u loads, %u stores, "
      "%u ranges), %u skipped as stack (%u local variable, %u alloca, "
      "%u pointer to stack, %u points-to, %u pointer parameter: callers' "
      "frames, %u points-to other frames), %u filtered, %u not "
      "addressable, %u asm statements with memory operands left alone, "
      "%u counter updates (%u combined, %u counted in registers over loops, "
      "%u at loop exits)\n",
      main_input_filename ? main_input_filename : "<stdin>", total,
      unit_counts.verdicts[INSTRUMENT], unit_counts.loads, unit_counts.stores,
      unit_counts.ranges, skipped, unit_counts.verdicts[SKIP_LOCAL_VARIABLE],
      unit_counts.verdicts[SKIP_ALLOCA],
      unit_counts.verdicts[SKIP_POINTER_TO_STACK],
      unit_counts.verdicts[SKIP_POINTS_TO_STACK],
      unit_counts.verdicts[SKIP_CALLERS_FRAMES],
      unit_counts.verdicts[SKIP_POINTS_TO_OTHER_FRAMES],
      unit_counts.verdicts[SKIP_READS_DISABLED]
          + unit_counts.verdicts[SKIP_WRITES_DISABLED]
          + unit_counts.verdicts[SKIP_GLOBALS_DISABLED],
      unit_counts.verdicts[SKIP_NOT_ADDRESSABLE], unit_counts.asm_statements,
      unit_counts.verdicts[INSTRUMENT] - unit_counts.combined
          - unit_counts.in_registers + unit_counts.exit_updates,
      unit_counts.combined, unit_counts.in_registers, unit_counts.exit_updates);
}
