/* Context disambiguation for profile feedback: cloning allocation
   wrappers.

   A wrapper (a function that returns what an allocation call returned)
   allocates for its callers: its contexts' next frames are their calls.
   When those callers' contexts have different classes, the wrapper's
   call is ambiguous; but if each caller's contexts agree, a clone of the
   wrapper per class, called by that class's callers, lets each copy's
   allocation call be hinted.  Done before inlining, in a simple IPA pass,
   for the wrappers of this unit and their callers in it.

   Under -flto the same pass runs a second time at link time, in lto1
   (each ltrans unit, or the whole program with -flto-partition=none):
   a late simple IPA pass, after inlining was applied, for the wrappers
   left out of line and their callers in the unit, which then hold all
   the program's units (lto_clone_call).  There it also devirtualizes an
   indirect call speculatively when the profile's contexts through it
   reach one wrapper only: `fp == &wrapper ? clone (...) : fp (...)`.  */

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
#include "diagnostic-core.h"
#include "dumpfile.h"
#include "tree-inline.h"

#include "feedback.h"

/* The shared profile reader (formats/, C, linked in with hidden symbols).  */
#include "../formats/feedback.h"

#include "feedback-internal.h"

static unsigned clones_made;
static unsigned speculated;   /* indirect calls devirtualized (-flto) */
static unsigned across_units; /* clones for callers of other units */

/* See feedback-internal.h.  */
unsigned
clone_count (void)
{
  return clones_made;
}

/* The wrappers cloned in this unit (their DECL_UIDs).  */
static vec<unsigned> cloned_wrappers;

/* See feedback-internal.h.  */
bool
wrapper_cloned (tree decl)
{
  for (unsigned uid : cloned_wrappers)
    if (uid == DECL_UID (decl))
      return true;
  return false;
}

/* See feedback-internal.h.  */
void
clone_lto_counts (unsigned *across, unsigned *devirtualized)
{
  *across = across_units;
  *devirtualized = speculated;
}

/* Does the function return the value CALL produces, directly or through
   conversions and PHIs?  */
static bool
returns_result (gcall *call)
{
  tree lhs = gimple_call_lhs (call);
  if (lhs == NULL_TREE || TREE_CODE (lhs) != SSA_NAME)
    return false;
  auto_vec<tree> names;
  names.safe_push (lhs);
  for (unsigned i = 0; i < names.length () && i < 32; i++)
    {
      imm_use_iterator iterator;
      gimple *use;
      FOR_EACH_IMM_USE_STMT (use, iterator, names[i])
      {
        if (greturn *ret = dyn_cast<greturn *> (use))
          {
            if (gimple_return_retval (ret) == names[i])
              return true;
          }
        else if (gphi *phi = dyn_cast<gphi *> (use))
          names.safe_push (gimple_phi_result (phi));
        else if (is_gimple_assign (use)
                 && CONVERT_EXPR_CODE_P (gimple_assign_rhs_code (use))
                 && TREE_CODE (gimple_assign_lhs (use)) == SSA_NAME)
          names.safe_push (gimple_assign_lhs (use));
      }
    }
  return false;
}

/* A caller of a wrapper, as the contexts see it: the frame after the
   wrapper's frames, and the classes of its contexts.  */
struct caller_group
{
  struct frame frame;
  unsigned classes[3];
};

static bool
same_call (const struct feedback_frame *f, const struct frame *g)
{
  return same_call_site (f->guid, f->line_offset, f->column, g->guid,
                         g->line_offset, g->column);
}

/* The one class of GROUP's contexts, or -1 when they disagree.  */
static int
group_class (const struct caller_group *group)
{
  int found = -1;
  for (int c = 0; c < 3; c++)
    if (group->classes[c] != 0)
      {
        if (found >= 0)
          return -1;
        found = c;
      }
  return found;
}

/* The frames of STMT in FN's body.  */
static unsigned
frames_in (tree fn, gimple *stmt, struct frame *frames)
{
  push_cfun (DECL_STRUCT_FUNCTION (fn));
  tree saved = current_function_decl;
  current_function_decl = fn;
  unsigned count = call_frames (stmt, frames);
  current_function_decl = saved;
  pop_cfun ();
  return count;
}

/* In CLONE, a copy of a wrapper made for COUNT callers of CLASS_, hint
   the copy of the allocation call CALL now: later, identical code folding
   sees two different functions and keeps both.  */
static void
hint_clone (cgraph_node *clone, gcall *call, enum feedback_class class_,
            unsigned count)
{
  int index = allocation_function (call);
  bool family_on = allocation_functions[index].family == FAMILY_C
                       ? feedback_options.hint
                       : feedback_options.hot_cold_new;
  push_cfun (DECL_STRUCT_FUNCTION (clone->decl));
  tree saved = current_function_decl;
  current_function_decl = clone->decl;
  basic_block bb;
  FOR_EACH_BB_FN (bb, cfun)
  for (gimple_stmt_iterator gsi = gsi_start_bb (bb); !gsi_end_p (gsi);
       gsi_next (&gsi))
    {
      gcall *copy = dyn_cast<gcall *> (gsi_stmt (gsi));
      if (copy == NULL
          || LOCATION_LOCUS (gimple_location (copy))
                 != LOCATION_LOCUS (gimple_location (call))
          || allocation_function (copy) != index)
        continue;
      const char *action
          = family_on ? "calls the hinted entry point" : "left alone";
      if (dump_file)
        fprintf (dump_file,
                 "memprof-use: %s call in %s, the clone for %u %s caller%s: "
                 "%s\n",
                 allocation_functions[index].name, clone->dump_name (), count,
                 feedback_class_name (class_), count == 1 ? "" : "s", action);
      if (feedback_options.remarks)
        inform (gimple_location (copy),
                "memprof: %qs call: %s in the clone %qs of its wrapper, "
                "called by its %u %s caller%s; %s",
                allocation_functions[index].name, feedback_class_name (class_),
                IDENTIFIER_POINTER (DECL_NAME (clone->decl)), count,
                feedback_class_name (class_), count == 1 ? "" : "s", action);
      if (family_on)
        {
          rewrite_call (&gsi, (unsigned) index,
                        class_ == FEEDBACK_COLD ? HINT_COLD : HINT_HOT);
          feedback_unit.rewritten[class_]++;
        }
      break;
    }
  current_function_decl = saved;
  pop_cfun ();
}

/* Under -flto: say at W that CLONE was made for EDGES' callers of
   class CLASS_, naming the units they are in when W is not.  */
static void
remark_across_units (cgraph_node *w, cgraph_node *clone,
                     const vec<cgraph_edge *> &edges,
                     enum feedback_class class_)
{
  const char *home = DECL_SOURCE_FILE (w->decl);
  const char *other = NULL;
  for (cgraph_edge *e : edges)
    {
      const char *unit = DECL_SOURCE_FILE (e->caller->decl);
      if (unit != NULL && home != NULL && strcmp (unit, home) != 0)
        other = unit;
    }
  if (other != NULL)
    across_units++;
  if (dump_file)
    fprintf (dump_file, "memprof-use: %s cloned %s as %s for %u %s caller%s\n",
             w->dump_name (), other ? "across units" : "in its unit",
             clone->dump_name (), edges.length (), feedback_class_name (class_),
             edges.length () == 1 ? "" : "s");
  if (feedback_options.remarks)
    inform (DECL_SOURCE_LOCATION (w->decl),
            "memprof: %qs cloned %s%s as %qs for its %u %s caller%s",
            w->name (), other ? "across units, from " : "in its unit",
            other ? other : "", IDENTIFIER_POINTER (DECL_NAME (clone->decl)),
            edges.length (), feedback_class_name (class_),
            edges.length () == 1 ? "" : "s");
}

/* The class of the group of GROUPS that E's call is, or -1.  */
static int
edge_class (cgraph_edge *e, const vec<caller_group> &groups,
            const caller_group **found)
{
  struct frame chain[MAX_CHAIN];
  if (e->call_stmt == NULL || !gimple_has_body_p (e->caller->decl)
      || e->caller->inlined_to || e->caller->in_other_partition)
    return -1;
  if (frames_in (e->caller->decl, e->call_stmt, chain) == 0)
    return -1;
  for (const caller_group &group : groups)
    if (same_call_site (group.frame.guid, group.frame.line_offset,
                        group.frame.column, chain[0].guid, chain[0].line_offset,
                        chain[0].column))
      {
        *found = &group;
        return group_class (&group);
      }
  return -1;
}

/* How many of the profile's contexts go through the call site FRAME, and
   (in *OTHERS) how many of them call there a function other than GUID.  */
static unsigned
contexts_through (const struct frame *frame, uint64_t guid, unsigned *others)
{
  unsigned through = 0;
  *others = 0;
  for (size_t i = 0; i < feedback_profile.context_count; i++)
    {
      const struct feedback_context *context = &feedback_profile.contexts[i];
      const struct feedback_frame *frames
          = &feedback_profile.frames[context->first_frame];
      for (unsigned k = 1; k < context->frame_count; k++)
        if (same_call (&frames[k], frame))
          {
            through++;
            if (frames[k - 1].guid != guid)
              (*others)++;
            break;
          }
    }
  return through;
}

/* Under -flto: make the indirect calls through which the profile's
   contexts reach only W (whose own frame has GUID) call W speculatively,
   and add the direct calls so made to BY_CLASS by their group's class.  */
static void
speculate_indirect_calls (cgraph_node *w, uint64_t guid,
                          const vec<caller_group> &groups,
                          auto_vec<cgraph_edge *> *by_class)
{
  auto_vec<cgraph_edge *> candidates;
  cgraph_node *node;
  FOR_EACH_DEFINED_FUNCTION (node)
  if (gimple_has_body_p (node->decl) && !node->inlined_to
      && !node->in_other_partition)
    for (cgraph_edge *e = node->indirect_calls; e != NULL; e = e->next_callee)
      if (!e->speculative && e->call_stmt != NULL
          && gimple_call_fn (e->call_stmt) != NULL_TREE
          && TREE_CODE (gimple_call_fn (e->call_stmt)) == SSA_NAME
          && !gimple_call_internal_p (e->call_stmt)
          && types_compatible_p (gimple_call_fntype (e->call_stmt),
                                 TREE_TYPE (w->decl)))
        candidates.safe_push (e);
  for (cgraph_edge *e : candidates)
    {
      const caller_group *group = NULL;
      int c = edge_class (e, groups, &group);
      if (c < 0)
        continue;
      unsigned others;
      unsigned through = contexts_through (&group->frame, guid, &others);
      location_t loc = gimple_location (e->call_stmt);
      if (others != 0)
        {
          if (feedback_options.remarks)
            inform (loc,
                    "memprof: indirect call not devirtualized: %u of the "
                    "%u contexts of the profile through it reach another "
                    "function than %qs",
                    others, through, w->name ());
          continue;
        }
      cgraph_node *caller = e->caller;
      cgraph_edge *direct = e->make_speculative (w, e->count);
      cgraph_edge::redirect_call_stmt_to_callee (direct);
      /* gimple_ic split the caller's blocks.  */
      push_cfun (DECL_STRUCT_FUNCTION (caller->decl));
      free_dominance_info (CDI_DOMINATORS);
      free_dominance_info (CDI_POST_DOMINATORS);
      pop_cfun ();
      speculated++;
      by_class[c].safe_push (direct);
      if (dump_file)
        fprintf (dump_file,
                 "memprof-use: indirect call in %s speculatively "
                 "devirtualized to %s (%u contexts through it, one "
                 "target)\n",
                 caller->dump_name (), w->dump_name (), through);
      if (feedback_options.remarks)
        inform (loc,
                "memprof: indirect call speculatively devirtualized: "
                "calls the %s clone of %qs when the pointer is %<&%s%> "
                "(%u context%s of the profile through this call, all to "
                "%qs)",
                feedback_class_name ((enum feedback_class) c), w->name (),
                w->name (), through, through == 1 ? "" : "s", w->name ());
    }
}

/* Clone W, whose allocation call CALL has the contexts grouped by caller
   in GROUPS, for its cold callers and its hot callers.  */
static void
clone_wrapper (cgraph_node *w, gcall *call, const vec<caller_group> &groups,
               uint64_t guid)
{
  auto_vec<cgraph_edge *> by_class[3];
  for (cgraph_edge *e = w->callers; e != NULL; e = e->next_caller)
    {
      const caller_group *group = NULL;
      int c = edge_class (e, groups, &group);
      if (c >= 0)
        by_class[c].safe_push (e);
    }
  if (in_lto_p)
    speculate_indirect_calls (w, guid, groups, by_class);
  if (in_lto_p && by_class[FEEDBACK_COLD].is_empty ()
      && by_class[FEEDBACK_HOT].is_empty () && feedback_options.remarks)
    {
      unsigned wanted = 0;
      for (const caller_group &group : groups)
        wanted += group_class (&group) == FEEDBACK_COLD
                  || group_class (&group) == FEEDBACK_HOT;
      inform (DECL_SOURCE_LOCATION (w->decl),
              "memprof: %qs not cloned at link time: none of the calls of "
              "its %u cold or hot callers in the profile is in this "
              "link-time unit out of line (a caller inlined, or in another "
              "LTO partition: %<-flto-partition=one%> keeps the program in "
              "one)",
              w->name (), wanted);
    }
  static const char *const suffixes[3]
      = { NULL, "memprof_cold", "memprof_hot" };
  for (int c = FEEDBACK_COLD; c <= FEEDBACK_HOT; c++)
    {
      if (by_class[c].is_empty ())
        continue;
      auto_vec<cgraph_edge *> edges;
      for (cgraph_edge *e : by_class[c])
        edges.safe_push (e);
      cgraph_node *clone = w->create_version_clone_with_body (
          edges.copy (), NULL, NULL, NULL, NULL, suffixes[c]);
      if (clone == NULL)
        continue;
      for (cgraph_edge *e : edges)
        cgraph_edge::redirect_call_stmt_to_callee (e);
      clones_made++;
      cloned_wrappers.safe_push (DECL_UID (w->decl));
      if (in_lto_p)
        remark_across_units (w, clone, edges, (enum feedback_class) c);
      hint_clone (clone, call, (enum feedback_class) c, edges.length ());
      if (dump_file)
        fprintf (dump_file, "memprof-use: %s cloned as %s for %u %s caller%s\n",
                 w->dump_name (), clone->dump_name (), edges.length (),
                 feedback_class_name ((enum feedback_class) c),
                 edges.length () == 1 ? "" : "s");
    }
}

static unsigned int
clone_wrappers (void)
{
  struct frame chain[MAX_CHAIN];
  auto_vec<cgraph_node *> nodes;
  cgraph_node *node;
  /* At link time, apply inlining and the other IPA transforms first
     (as IPA points-to does): the calls are then those compiled.  */
  if (in_lto_p)
    FOR_EACH_FUNCTION_WITH_GIMPLE_BODY (node)
  if (!node->inlined_to && !node->in_other_partition)
    node->get_body ();
  FOR_EACH_DEFINED_FUNCTION (node)
  if (gimple_has_body_p (node->decl) && !node->inlined_to
      && !node->in_other_partition && tree_versionable_function_p (node->decl))
    nodes.safe_push (node);
  for (cgraph_node *w : nodes)
    {
      gcall *found = NULL;
      uint64_t guid = 0;
      auto_vec<caller_group> groups;
      push_cfun (DECL_STRUCT_FUNCTION (w->decl));
      tree saved = current_function_decl;
      current_function_decl = w->decl;
      basic_block bb;
      FOR_EACH_BB_FN (bb, cfun)
      for (gimple_stmt_iterator gsi = gsi_start_bb (bb);
           !gsi_end_p (gsi) && found == NULL; gsi_next (&gsi))
        {
          gcall *call = dyn_cast<gcall *> (gsi_stmt (gsi));
          if (call == NULL || gimple_call_internal_p (call)
              || allocation_function (call) < 0 || !returns_result (call))
            continue;
          unsigned count = call_frames (call, chain);
          groups.truncate (0);
          for (size_t i = first_with_leaf (chain[0].guid);
               i < feedback_profile.context_count
               && leaf_index[i].guid == chain[0].guid;
               i++)
            {
              const struct feedback_context *context
                  = &feedback_profile.contexts[leaf_index[i].context];
              if (!context_starts_with (context, chain, count)
                  || context->frame_count <= count)
                continue;
              const struct feedback_frame *next
                  = &feedback_profile.frames[context->first_frame + count];
              caller_group *group = NULL;
              for (caller_group &g : groups)
                if (same_call (next, &g.frame))
                  group = &g;
              if (group == NULL)
                {
                  caller_group fresh;
                  memset (&fresh, 0, sizeof fresh);
                  fresh.frame.guid = next->guid;
                  fresh.frame.line_offset = next->line_offset;
                  fresh.frame.column = next->column;
                  groups.safe_push (fresh);
                  group = &groups.last ();
                }
              group->classes[feedback_classify (
                  context, &feedback_options.thresholds)]++;
            }
          /* Worth a clone: every caller's contexts agree, and not all
             callers are of one class.  */
          bool consistent = groups.length () > 1;
          int first = -1;
          bool differ = false;
          for (const caller_group &g : groups)
            {
              int c = group_class (&g);
              if (c < 0)
                consistent = false;
              else if (first < 0)
                first = c;
              else if (c != first)
                differ = true;
            }
          if (consistent && differ)
            {
              found = call;
              guid = chain[count - 1].guid;
            }
        }
      current_function_decl = saved;
      pop_cfun ();
      if (found != NULL)
        clone_wrapper (w, found, groups, guid);
    }
  return 0;
}

static const pass_data clone_pass_data = {
  SIMPLE_IPA_PASS, "memprof-clone", OPTGROUP_NONE, TV_NONE, 0, 0, 0, 0, 0,
};

class clone_pass : public simple_ipa_opt_pass
{
  /* The link-time instance (-flto), or the compile-time one.  */
  bool late;

public:
  clone_pass (gcc::context *context, bool late_)
      : simple_ipa_opt_pass (clone_pass_data, context), late (late_)
  {
  }

  /* Bodies are needed: the compile-time instance not with -flto (whose
     link stage has none at this point), the link-time one in lto1 where
     it has them (not in WPA).  */
  bool
  gate (function *) final override
  {
    if (!feedback_options.clone || seen_error ())
      return false;
    if (late)
      return in_lto_p && !flag_wpa;
    return !flag_generate_lto && !in_lto_p;
  }

  unsigned int
  execute (function *) final override
  {
    return clone_wrappers ();
  }
};

/* See feedback-internal.h.  */
opt_pass *
make_clone_pass (gcc::context *context, bool late)
{
  return new clone_pass (context, late);
}
