/* Context disambiguation for profile feedback: cloning allocation
   wrappers.

   A wrapper (a function that returns what an allocation call returned)
   allocates for its callers: its contexts' next frames are their calls.
   When those callers' contexts have different classes, the wrapper's
   call is ambiguous; but if each caller's contexts agree, a clone of the
   wrapper per class, called by that class's callers, lets each copy's
   allocation call be hinted.  Done before inlining, in a simple IPA pass,
   for the wrappers of this unit and their callers in it.

   A caller whose contexts through the wrapper are mixed but part at its
   own callers is cloned per class in turn, its clones calling the
   wrapper's clones (a clone chain: xstrdup -> xmalloc), up to
   clone-depth functions, callers of MAX_CHAINED_STATEMENTS at most.

   Under -flto the same pass runs a second time at link time, in lto1
   (each ltrans unit, or the whole program with -flto-partition=none):
   a late simple IPA pass, after inlining was applied, for the wrappers
   left out of line and their callers in the unit, which then hold all
   the program's units (lto_clone_call).  There it also devirtualizes an
   indirect call speculatively when the profile's contexts through it
   reach one wrapper only: `fp == &wrapper ? clone (...) : fp (...)`.
   lto_partition.cc keeps the wrappers and their callers in one ltrans
   unit.  */

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

/* The functions a clone chain may have: the wrapper and the callers
   cloned above it (-fplugin-arg-memprof-clone-depth).  */
unsigned clone_depth = 3;

/* See feedback-internal.h.  */
bool
clone_argument (const char *key, const char *value, bool *ok)
{
  if (strcmp (key, "clone-depth") != 0)
    return false;
  char *end = NULL;
  long depth = value != NULL ? strtol (value, &end, 10) : -1;
  if (value == NULL || end == value || *end != '\0' || depth < 1
      || depth > MAX_CHAIN_DEPTH)
    {
      error ("memprof: bad value %qs in %<-fplugin-arg-memprof-clone-depth%>: "
             "expected a number of functions from 1 to %d",
             value ? value : "", MAX_CHAIN_DEPTH);
      *ok = false;
    }
  else
    clone_depth = (unsigned) depth;
  return true;
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

static bool
same_call (const struct feedback_frame *f, const struct frame *g)
{
  return same_call_site (f->guid, f->line_offset, f->column, g->guid,
                         g->line_offset, g->column);
}

/* See feedback-internal.h.  */
int
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
                          vec<cgraph_edge *> *by_class)
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

/* See feedback-internal.h.  */
void
group_callers (const struct frame *prefix, unsigned count,
               vec<caller_group> *groups)
{
  groups->truncate (0);
  for (size_t i = first_with_leaf (prefix[0].guid);
       i < feedback_profile.context_count
       && leaf_index[i].guid == prefix[0].guid;
       i++)
    {
      const struct feedback_context *context
          = &feedback_profile.contexts[leaf_index[i].context];
      if (!context_starts_with (context, prefix, count)
          || context->frame_count <= count)
        continue;
      const struct feedback_frame *next
          = &feedback_profile.frames[context->first_frame + count];
      caller_group *group = NULL;
      for (caller_group &g : *groups)
        if (same_call (next, &g.frame))
          group = &g;
      if (group == NULL)
        {
          caller_group fresh;
          memset (&fresh, 0, sizeof fresh);
          fresh.frame.guid = next->guid;
          fresh.frame.line_offset = next->line_offset;
          fresh.frame.column = next->column;
          fresh.first_context = leaf_index[i].context;
          groups->safe_push (fresh);
          group = &groups->last ();
        }
      group->classes[feedback_classify (context,
                                        &feedback_options.thresholds)]++;
    }
}

/* What cloning FN does for the contexts through it: per class, FN's
   callers that get the class's clone, and the callers whose contexts
   are mixed but tell their classes apart further up, each cloned per
   class in turn (its plan in PLANS) to call FN's clones.  */
struct clone_plan
{
  cgraph_node *fn;
  vec<cgraph_edge *> edges[3];
  vec<cgraph_edge *> chained;
  vec<clone_plan *> plans;
  bool classes[3]; /* the classes some caller of the chain has */
};

static void
free_plan (clone_plan *plan)
{
  for (clone_plan *sub : plan->plans)
    free_plan (sub);
  for (int c = 0; c < 3; c++)
    plan->edges[c].release ();
  plan->chained.release ();
  plan->plans.release ();
  XDELETE (plan);
}

/* Is FN small enough to be copied for a clone chain?  */
static bool
small_function (cgraph_node *fn)
{
  unsigned statements = 0;
  basic_block bb;
  FOR_EACH_BB_FN (bb, DECL_STRUCT_FUNCTION (fn->decl))
  for (gimple_stmt_iterator gsi = gsi_start_bb (bb); !gsi_end_p (gsi);
       gsi_next (&gsi))
    statements++;
  return statements <= MAX_CHAINED_STATEMENTS;
}

/* Can X, a caller of a function on the chain ANCESTORS (DEPTH of them),
   be cloned to call a clone of it?  */
static bool
chainable (cgraph_node *x, cgraph_node *const *ancestors, unsigned depth)
{
  if (depth >= clone_depth || x->inlined_to || x->in_other_partition
      || !gimple_has_body_p (x->decl) || !tree_versionable_function_p (x->decl))
    return false;
  for (unsigned i = 0; i < depth; i++)
    if (ancestors[i] == x)
      return false;
  return small_function (x);
}

/* The one class of the contexts in GROUPS, -1 when they disagree, -2
   when there are none.  */
static int
groups_class (const vec<caller_group> &groups)
{
  caller_group all;
  memset (&all, 0, sizeof all);
  for (const caller_group &group : groups)
    for (int c = 0; c < 3; c++)
      all.classes[c] += group.classes[c];
  if (all.classes[0] + all.classes[1] + all.classes[2] == 0)
    return -2;
  return group_class (&all);
}

/* Plan the clones of ANCESTORS[DEPTH - 1] for the contexts that start
   with the COUNT frames of PREFIX, grouped by caller in GROUPS: every
   group of one class, or mixed and told apart by its callers' whole
   frames (a caller's inline frames) or by the clones of its callers (a
   chain of at most clone-depth functions).  Null when some group stays
   mixed.  */
static clone_plan *
plan_clones (cgraph_node **ancestors, unsigned depth,
             const struct frame *prefix, unsigned count,
             vec<caller_group> &groups)
{
  cgraph_node *fn = ancestors[depth - 1];
  clone_plan *plan = XCNEW (clone_plan);
  plan->fn = fn;
  auto_vec<bool> blocked;
  blocked.safe_grow_cleared (groups.length ());
  for (const caller_group &group : groups)
    {
      int c = group_class (&group);
      if (c >= 0)
        plan->classes[c] = true;
    }
  struct frame chain[MAX_CHAIN];
  for (cgraph_edge *e = fn->callers; e != NULL; e = e->next_caller)
    {
      const caller_group *found = NULL;
      int c = edge_class (e, groups, &found);
      if (c >= 0)
        {
          plan->edges[c].safe_push (e);
          continue;
        }
      if (found == NULL)
        continue;
      caller_group *group = const_cast<caller_group *> (found);
      unsigned index = group - groups.address ();
      unsigned added = frames_in (e->caller->decl, e->call_stmt, chain);
      if (count + added > MAX_CHAIN)
        {
          blocked[index] = true;
          continue;
        }
      struct frame longer[MAX_CHAIN];
      memcpy (longer, prefix, count * sizeof *prefix);
      memcpy (longer + count, chain, added * sizeof *chain);
      auto_vec<caller_group> above;
      group_callers (longer, count + added, &above);
      /* The caller's inline frames may tell the class already.  */
      int own = groups_class (above);
      if (own >= 0)
        {
          plan->edges[own].safe_push (e);
          group->chained = true;
          continue;
        }
      bool seen = false;
      for (cgraph_edge *other : plan->chained)
        seen |= other->caller == e->caller;
      ancestors[depth] = e->caller;
      clone_plan *sub
          = own == -1 && !seen && chainable (e->caller, ancestors, depth)
                ? plan_clones (ancestors, depth + 1, longer, count + added,
                               above)
                : NULL;
      if (sub == NULL)
        {
          blocked[index] |= own == -1;
          continue;
        }
      group->chained = true;
      plan->chained.safe_push (e);
      plan->plans.safe_push (sub);
      for (int k = 0; k < 3; k++)
        plan->classes[k] |= sub->classes[k];
    }
  for (unsigned i = 0; i < groups.length (); i++)
    if (group_class (&groups[i]) < 0 && (!groups[i].chained || blocked[i]))
      {
        free_plan (plan);
        return NULL;
      }
  return plan;
}

/* Say where CLONE, a copy of a caller made to call the clone TARGET of
   class CLASS_, was made and for how many callers.  */
static void
remark_chained (cgraph_node *fn, cgraph_node *clone, cgraph_node *target,
                unsigned callers, enum feedback_class class_, unsigned depth)
{
  if (dump_file)
    fprintf (dump_file,
             "memprof-use: %s cloned as %s for %u %s caller%s, calling %s "
             "(clone chain, level %u)\n",
             fn->dump_name (), clone->dump_name (), callers,
             feedback_class_name (class_), callers == 1 ? "" : "s",
             target->dump_name (), depth + 1);
  if (feedback_options.remarks)
    inform (DECL_SOURCE_LOCATION (fn->decl),
            "memprof: %qs cloned as %qs for its %u %s caller%s, to call "
            "%qs: a clone chain (level %u of at most %u)",
            fn->name (), IDENTIFIER_POINTER (DECL_NAME (clone->decl)), callers,
            feedback_class_name (class_), callers == 1 ? "" : "s",
            IDENTIFIER_POINTER (DECL_NAME (target->decl)), depth + 1,
            clone_depth);
}

/* In CLONE, a copy of a caller of TARGET's origin, make the copy of the
   call E call TARGET instead.  */
static void
redirect_copied_call (cgraph_node *clone, cgraph_edge *e, cgraph_node *target)
{
  location_t where = LOCATION_LOCUS (gimple_location (e->call_stmt));
  for (cgraph_edge *copy = clone->callees; copy != NULL;
       copy = copy->next_callee)
    if (copy->callee == e->callee && copy->call_stmt != NULL
        && LOCATION_LOCUS (gimple_location (copy->call_stmt)) == where)
      {
        copy->redirect_callee (target);
        cgraph_edge::redirect_call_stmt_to_callee (copy);
        return;
      }
}

/* Does PLAN send some caller, direct or through a chain, to the clone of
   class C?  */
static bool
plan_reaches (const clone_plan *plan, int c)
{
  if (!plan->edges[c].is_empty ())
    return true;
  for (unsigned i = 0; i < plan->chained.length (); i++)
    if (plan_reaches (plan->plans[i], c))
      return true;
  return false;
}

/* How many callers of PLAN's function call its clone of class C: its
   own callers of that class, and its chained callers' clones.  */
static unsigned
callers_reached (const clone_plan *plan, int c)
{
  unsigned count = plan->edges[c].length ();
  for (unsigned i = 0; i < plan->chained.length (); i++)
    count += plan_reaches (plan->plans[i], c);
  return count;
}

static const char *const clone_suffixes[3]
    = { NULL, "memprof_cold", "memprof_hot" };

/* Clone PLAN's function for class C: the clone called by the callers of
   that class, and the clones of the chained callers made to call it.
   CALL, in the wrapper (DEPTH 0), is the allocation call to hint.  */
static cgraph_node *
clone_for_class (clone_plan *plan, int c, gcall *call, unsigned depth)
{
  vec<cgraph_edge *> &edges = plan->edges[c];
  cgraph_node *clone = plan->fn->create_version_clone_with_body (
      edges.copy (), NULL, NULL, NULL, NULL, clone_suffixes[c]);
  if (clone == NULL)
    return NULL;
  for (cgraph_edge *e : edges)
    cgraph_edge::redirect_call_stmt_to_callee (e);
  clones_made++;
  if (depth == 0)
    cloned_wrappers.safe_push (DECL_UID (plan->fn->decl));
  if (in_lto_p && !edges.is_empty ())
    remark_across_units (plan->fn, clone, edges, (enum feedback_class) c);
  for (unsigned i = 0; i < plan->chained.length (); i++)
    if (plan_reaches (plan->plans[i], c))
      {
        cgraph_node *caller
            = clone_for_class (plan->plans[i], c, NULL, depth + 1);
        if (caller == NULL)
          continue;
        redirect_copied_call (caller, plan->chained[i], clone);
        remark_chained (plan->plans[i]->fn, caller, clone,
                        plan->plans[i]->edges[c].length (),
                        (enum feedback_class) c, depth + 1);
      }
  if (call != NULL)
    hint_clone (clone, call, (enum feedback_class) c,
                callers_reached (plan, c));
  if (dump_file)
    fprintf (dump_file, "memprof-use: %s cloned as %s for %u %s caller%s\n",
             plan->fn->dump_name (), clone->dump_name (), edges.length (),
             feedback_class_name ((enum feedback_class) c),
             edges.length () == 1 ? "" : "s");
  return clone;
}

/* Clone W, whose allocation call CALL has the contexts grouped by caller
   in GROUPS, for its cold callers and its hot callers (PLAN), through
   chains of callers where their contexts part further up.  */
static void
clone_wrapper (cgraph_node *w, gcall *call, const vec<caller_group> &groups,
               uint64_t guid, clone_plan *plan)
{
  if (in_lto_p)
    speculate_indirect_calls (w, guid, groups, plan->edges);
  if (in_lto_p && !plan_reaches (plan, FEEDBACK_COLD)
      && !plan_reaches (plan, FEEDBACK_HOT) && feedback_options.remarks)
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
  for (int c = FEEDBACK_COLD; c <= FEEDBACK_HOT; c++)
    if (plan_reaches (plan, c))
      clone_for_class (plan, c, call, 0);
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
      clone_plan *plan = NULL;
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
          /* The function that holds the call is cloned like a wrapper
             when it returns the call's result, or is small.  */
          if (call == NULL || gimple_call_internal_p (call)
              || allocation_function (call) < 0
              || (!returns_result (call) && !small_function (w)))
            continue;
          unsigned count = call_frames (call, chain);
          group_callers (chain, count, &groups);
          /* Worth a clone: every caller's contexts agree, or part further
             up where its callers can be cloned too, and not all callers
             are of one class.  */
          cgraph_node *ancestors[MAX_CHAIN_DEPTH] = { w };
          plan = plan_clones (ancestors, 1, chain, count, groups);
          if (plan != NULL
              && plan->classes[0] + plan->classes[1] + plan->classes[2] > 1)
            {
              found = call;
              guid = chain[count - 1].guid;
            }
          else if (plan != NULL)
            {
              free_plan (plan);
              plan = NULL;
            }
        }
      current_function_decl = saved;
      pop_cfun ();
      if (found != NULL)
        {
          clone_wrapper (w, found, groups, guid, plan);
          free_plan (plan);
        }
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
