/* Profile feedback under -flto, in WPA: keeping the wrappers to clone
   with their callers in one link-time unit.

   The link step clones a wrapper for the callers of each class
   (clone.cc) in the ltrans unit that holds it, for the callers in that
   unit: a caller in another partition keeps calling the wrapper.  WPA
   cannot take the decision itself (its call edges have no statement,
   hence no location to match a profile frame, and a plugin has no LTO
   section to carry a summary from the compile step), and GCC 12's
   partitioner (gcc/lto/lto-partition.cc, lto_balanced_map) has no hook:
   it keeps together only a symbol's inline clones, thunks, aliases and
   comdat group.  So this pass, the last of the regular IPA passes in
   WPA, reads the profile alone: when some wrapper's contexts would be
   cloned (each caller's contexts of one class, or told apart up a clone
   chain, and callers of different classes), and its callers are
   functions of this link that the partitioning asked for may put in
   another unit, it sets the partitioning to one (as
   -flto-partition=one) and says so, with the cost: one ltrans unit,
   code generation no longer in parallel.  */

#include "gcc-plugin.h"

#include "tree.h"
#include "tree-pass.h"
#include "context.h"
#include "cgraph.h"
#include "diagnostic-core.h"
#include "dumpfile.h"
#include "alloc-pool.h"
#include "value-range.h"
#include "symbol-summary.h"
#include "sreal.h"
#include "ipa-prop.h"
#include "ipa-fnsummary.h"

#include "feedback.h"
#include "../formats/feedback.h"
#include "feedback-internal.h"

/* The program's functions the profile names, by GUID.  */
struct named_function
{
  uint64_t guid;
  cgraph_node *node;
};

static int
compare_named (const void *a, const void *b)
{
  uint64_t x = ((const named_function *) a)->guid;
  uint64_t y = ((const named_function *) b)->guid;
  return x < y ? -1 : x > y;
}

static cgraph_node *
function_named (const vec<named_function> &functions, uint64_t guid)
{
  named_function key = { guid, NULL };
  named_function *found = (named_function *) bsearch (
      &key, functions.address (), functions.length (), sizeof key,
      compare_named);
  return found ? found->node : NULL;
}

/* The frame of CONTEXT at AT as a call's frame.  */
static void
frame_at (const struct feedback_context *context, unsigned at,
          struct frame *frame)
{
  const struct feedback_frame *f
      = &feedback_profile.frames[context->first_frame + at];
  memset (frame, 0, sizeof *frame);
  frame->guid = f->guid;
  frame->line_offset = f->line_offset;
  frame->column = f->column;
  frame->inlined = f->inlined != 0;
}

/* The index of the first frame of CONTEXT from AT on that is not inlined
   into the next: the frame of the function that holds the call at AT.  */
static unsigned
physical_frame (const struct feedback_context *context, unsigned at)
{
  while (at + 1 < context->frame_count
         && feedback_profile.frames[context->first_frame + at].inlined)
    at++;
  return at;
}

/* Would the contexts that start with the COUNT frames of PREFIX be told
   apart by clones (clone.cc's rule, on the profile's frames alone)?  Adds
   the functions of the callers concerned to CONCERNED, and the classes
   they have to CLASSES.  */
static bool
resolvable (struct frame *prefix, unsigned count, unsigned depth,
            const vec<named_function> &functions, vec<cgraph_node *> *concerned,
            bool *classes)
{
  auto_vec<caller_group> groups;
  group_callers (prefix, count, &groups);
  for (const caller_group &group : groups)
    {
      const struct feedback_context *context
          = &feedback_profile.contexts[group.first_context];
      unsigned end = physical_frame (context, count);
      struct frame caller;
      frame_at (context, end, &caller);
      cgraph_node *node = function_named (functions, caller.guid);
      int c = group_class (&group);
      if (c >= 0)
        classes[c] = true;
      else
        {
          if (end + 1 > MAX_CHAIN || node == NULL)
            return false;
          for (unsigned k = count; k <= end; k++)
            frame_at (context, k, &prefix[k]);
          /* The caller's inline frames may tell the class already; else
             its own callers, up a clone chain.  */
          auto_vec<caller_group> above;
          group_callers (prefix, end + 1, &above);
          caller_group all;
          memset (&all, 0, sizeof all);
          for (const caller_group &g : above)
            for (int k = 0; k < 3; k++)
              all.classes[k] += g.classes[k];
          int own = group_class (&all);
          if (own >= 0)
            classes[own] = true;
          else if (depth + 1 >= clone_depth
                   || !resolvable (prefix, end + 1, depth + 1, functions,
                                   concerned, classes))
            return false;
        }
      if (node != NULL)
        concerned->safe_push (node);
    }
  return true;
}

/* Might the partitioning asked for put NODES in more than one unit?
   Balanced partitioning keeps a program smaller than
   --param min-partition-size in one; 1to1 keeps each source unit in one.  */
static bool
may_split (const vec<cgraph_node *> &nodes, int64_t total_size)
{
  switch (flag_lto_partition)
    {
    case LTO_PARTITION_ONE:
    case LTO_PARTITION_NONE:
      return false;
    case LTO_PARTITION_BALANCED:
      return total_size > param_min_partition_size;
    case LTO_PARTITION_1TO1:
      for (cgraph_node *node : nodes)
        if (node->lto_file_data != nodes[0]->lto_file_data)
          return true;
      return false;
    default:
      return true;
    }
}

static const char *
partitioning_name (void)
{
  switch (flag_lto_partition)
    {
    case LTO_PARTITION_BALANCED:
      return "balanced";
    case LTO_PARTITION_1TO1:
      return "1to1";
    case LTO_PARTITION_MAX:
      return "max";
    default:
      return "one";
    }
}

static unsigned int
keep_wrappers_with_callers (void)
{
  auto_vec<named_function> functions;
  int64_t total_size = 0;
  cgraph_node *node;
  /* Every copy of a function (inline clones, IPA-CP's constprop clones)
     has the profile's name of the function; its unit is that of the
     function it is inlined into.  */
  FOR_EACH_DEFINED_FUNCTION (node)
  {
    if (node->get_partitioning_class () == SYMBOL_PARTITION && !node->alias
        && ipa_size_summaries != NULL && ipa_size_summaries->get (node) != NULL)
      total_size += ipa_size_summaries->get (node)->size;
    cgraph_node *origin = node;
    while (origin->clone_of != NULL)
      origin = origin->clone_of;
    named_function named = { function_guid (origin->decl),
                             node->inlined_to ? node->inlined_to : node };
    functions.safe_push (named);
  }
  functions.qsort (compare_named);

  struct frame prefix[MAX_CHAIN];
  unsigned wrappers = 0;
  const char *example = NULL;
  auto_vec<cgraph_node *> concerned;
  auto_vec<bool> seen;
  seen.safe_grow_cleared (feedback_profile.context_count);
  for (size_t i = 0; i < feedback_profile.context_count; i++)
    {
      const struct feedback_context *context = &feedback_profile.contexts[i];
      if (seen[i] || context->frame_count < 2)
        continue;
      /* The allocation call's frames: up to its function's own.  */
      unsigned count = physical_frame (context, 0) + 1;
      if (count >= context->frame_count || count > MAX_CHAIN)
        continue;
      for (unsigned k = 0; k < count; k++)
        frame_at (context, k, &prefix[k]);
      for (size_t j = i; j < feedback_profile.context_count; j++)
        seen[j] = seen[j]
                  || context_starts_with (&feedback_profile.contexts[j], prefix,
                                          count);
      cgraph_node *wrapper = function_named (functions, prefix[count - 1].guid);
      if (wrapper == NULL)
        continue;
      const struct feedback_frame *own
          = &feedback_profile.frames[context->first_frame + count - 1];
      auto_vec<cgraph_node *> callers;
      bool classes[3] = { false, false, false };
      if (!resolvable (prefix, count, 0, functions, &callers, classes)
          || classes[0] + classes[1] + classes[2] < 2 || callers.is_empty ())
        continue;
      wrappers++;
      if (example == NULL)
        example = feedback_profile.strings + own->name;
      callers.safe_push (wrapper);
      for (cgraph_node *caller : callers)
        if (!concerned.contains (caller))
          concerned.safe_push (caller);
    }
  if (concerned.is_empty () || !may_split (concerned, total_size))
    return 0;
  auto_vec<lto_file_decl_data *> units;
  for (cgraph_node *n : concerned)
    if (!units.contains (n->lto_file_data))
      units.safe_push (n->lto_file_data);
  fprintf (stderr,
           "memprof: -flto: partitioning one instead of %s: %u wrapper%s to "
           "clone per class ('%s'%s) and their callers, %u functions of %u "
           "unit%s, stay in one link-time unit; its code generation is not "
           "done in parallel (-fplugin-arg-memprof-clone-wrappers=0 keeps "
           "the partitioning asked for)\n",
           partitioning_name (), wrappers, wrappers == 1 ? "" : "s", example,
           wrappers == 1 ? "" : "...", concerned.length (), units.length (),
           units.length () == 1 ? "" : "s");
  if (dump_file)
    fprintf (dump_file,
             "memprof-use: partitioning set to one (was %s): %u wrappers, "
             "%u functions concerned, program size %" PRId64 "\n",
             partitioning_name (), wrappers, concerned.length (), total_size);
  flag_lto_partition = LTO_PARTITION_ONE;
  return 0;
}

static const pass_data lto_partition_pass_data = {
  IPA_PASS, "memprof-lto-partition", OPTGROUP_NONE, TV_NONE, 0, 0, 0, 0, 0,
};

class lto_partition_pass : public ipa_opt_pass_d
{
public:
  lto_partition_pass (gcc::context *context)
      : ipa_opt_pass_d (lto_partition_pass_data, context, NULL, NULL, NULL,
                        NULL, NULL, NULL, 0, NULL, NULL)
  {
  }

  /* WPA only: the partitioning follows the regular IPA passes there.  */
  bool
  gate (function *) final override
  {
    return flag_wpa && feedback_options.clone && !seen_error ();
  }

  unsigned int
  execute (function *) final override
  {
    return keep_wrappers_with_callers ();
  }
};

/* See feedback-internal.h.  */
opt_pass *
make_lto_partition_pass (gcc::context *context)
{
  return new lto_partition_pass (context);
}
