/* Context disambiguation for profile feedback: cloning allocation
   wrappers.

   A wrapper (a function that returns what an allocation call returned)
   allocates for its callers: its contexts' next frames are their calls.
   When those callers' contexts have different classes, the wrapper's
   call is ambiguous; but if each caller's contexts agree, a clone of the
   wrapper per class, called by that class's callers, lets each copy's
   allocation call be hinted.  Done before inlining, in a simple IPA pass,
   for the wrappers of this unit and their callers in it.  */

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

/* See feedback-internal.h.  */
unsigned
clone_count (void)
{
  return clones_made;
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

/* Clone W, whose allocation call CALL has the contexts grouped by caller
   in GROUPS, for its cold callers and its hot callers.  */
static void
clone_wrapper (cgraph_node *w, gcall *call, const vec<caller_group> &groups)
{
  auto_vec<cgraph_edge *> by_class[3];
  struct frame chain[MAX_CHAIN];
  for (cgraph_edge *e = w->callers; e != NULL; e = e->next_caller)
    {
      if (e->call_stmt == NULL || !gimple_has_body_p (e->caller->decl))
        continue;
      unsigned count = frames_in (e->caller->decl, e->call_stmt, chain);
      if (count == 0)
        continue;
      for (const caller_group &group : groups)
        if (same_call_site (group.frame.guid, group.frame.line_offset,
                            group.frame.column, chain[0].guid,
                            chain[0].line_offset, chain[0].column))
          {
            int c = group_class (&group);
            if (c >= 0)
              by_class[c].safe_push (e);
            break;
          }
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
  FOR_EACH_DEFINED_FUNCTION (node)
  if (gimple_has_body_p (node->decl) && !node->inlined_to
      && tree_versionable_function_p (node->decl))
    nodes.safe_push (node);
  for (cgraph_node *w : nodes)
    {
      gcall *found = NULL;
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
            found = call;
        }
      current_function_decl = saved;
      pop_cfun ();
      if (found != NULL)
        clone_wrapper (w, found, groups);
    }
  return 0;
}

static const pass_data clone_pass_data = {
  SIMPLE_IPA_PASS, "memprof-clone", OPTGROUP_NONE, TV_NONE, 0, 0, 0, 0, 0,
};

class clone_pass : public simple_ipa_opt_pass
{
public:
  clone_pass (gcc::context *context)
      : simple_ipa_opt_pass (clone_pass_data, context)
  {
  }

  /* Bodies are needed: not with -flto (whose link stage has none at this
     point).  */
  bool
  gate (function *) final override
  {
    return feedback_options.clone && !flag_generate_lto && !in_lto_p
           && !seen_error ();
  }

  unsigned int
  execute (function *) final override
  {
    return clone_wrappers ();
  }
};

/* See feedback-internal.h.  */
opt_pass *
make_clone_pass (gcc::context *context)
{
  return new clone_pass (context);
}
