/* memprof-use: profile feedback.  With -fplugin-arg-memprof-use=FILE (a
   .mprof file from `memprof merge --binary', or the YAML of
   `llvm-profdata show --memory'), every allocation call of the unit is
   matched to the profile's contexts by its frames as LLVM defines them
   (function GUID, line offset from the function's first line, column,
   and the chain of functions GCC inlined there), classified hot, cold or
   neither with LLVM 19's rule (its thresholds fitted to the profiled run
   unless LLVM's own are asked for: docs/feedback.md), and rewritten:

     malloc, calloc, realloc, aligned_alloc, posix_memalign, memalign,
     strdup, strndup  ->  __memprof_hint_NAME (..., hint) of libmemprof_hint
     operator new and new[] (plain, nothrow, aligned)
                      ->  tcmalloc's __hot_cold_t overloads (hot-cold-new)

   The pass runs after inlining, so a call's inline chain is the one the
   profiled binary had (built with the same compiler and options), and the
   profile's frames match it.  */

#include "gcc-plugin.h"

#include "tree.h"
#include "tree-pass.h"
#include "context.h"
#include "function.h"
#include "basic-block.h"
#include "gimple.h"
#include "gimple-iterator.h"
#include "ssa.h"
#include "stringpool.h"
#include "cgraph.h"
#include "diagnostic-core.h"
#include "ggc.h"
#include "langhooks.h"
#include "tree-eh.h"
#include "dumpfile.h"
#include "gimple-pretty-print.h"
#include "tree-inline.h"
#include "cfgloop.h"
#include "opts.h"
#include "toplev.h"

#include "plugin.h"
#include "feedback.h"
#include "pass.h"

/* The shared profile reader (formats/, C, linked in with hidden symbols).  */
#include "../formats/feedback.h"

#include "feedback-internal.h"

/* LLVM's function GUID of a name (formats/profile.c).  */
extern "C" uint64_t profile_guid (const char *linkage_name);

const char feedback_argument_names[]
    = "use=FILE, instrument=0|1, remarks, hot-cold-new[=0|1], hint=0|1, "
      "clone-wrappers=0|1, clone-depth=N, context-hints=0|1, "
      "context-min-share=PERCENT, columns=0|1, "
      "cold-density=X, "
      "cold-lifetime=SECONDS, "
      "hot-density=X, global-hot-density=X, global-cold-size=BYTES, "
      "thresholds=run|llvm, cold-lifetime-share=PERCENT, "
      "cold-density-ratio=X, hot-density-ratio=X";

const char feedback_help[]
    = "  -fplugin-arg-memprof-use=FILE            profile feedback: rewrite "
      "hot and cold allocation sites (a .mprof file, or llvm-profdata's "
      "YAML)\n"
      "  -fplugin-arg-memprof-remarks             a note at each allocation "
      "call the profile matched\n"
      "  -fplugin-arg-memprof-hint=0|1            rewrite C allocation calls "
      "to libmemprof_hint's entry points (default 1)\n"
      "  -fplugin-arg-memprof-hot-cold-new[=0|1]  rewrite operator new to "
      "tcmalloc's __hot_cold_t overloads (default 0)\n"
      "  -fplugin-arg-memprof-clone-wrappers=0|1  clone an allocation "
      "wrapper whose callers' contexts differ (default 1)\n"
      "  -fplugin-arg-memprof-clone-depth=N       clone chains of at most N "
      "functions: the wrapper and its callers up (1 to 6, default 3)\n"
      "  -fplugin-arg-memprof-context-hints=0|1   classify an ambiguous "
      "call's allocations by their calling context at run time (default "
      "1)\n"
      "  -fplugin-arg-memprof-context-min-share=P  only when its cold and hot "
      "contexts hold P%% of the call's bytes or more (default 2)\n"
      "  -fplugin-arg-memprof-columns=0|1         compare columns when the "
      "profile has them (default 1, 0 for preprocessed input)\n"
      "  -fplugin-arg-memprof-cold-density=X      lifetime access density "
      "(accesses/byte/s) below which a context is cold (default 0.05)\n"
      "  -fplugin-arg-memprof-cold-lifetime=S     mean lifetime (s) a cold "
      "context must reach (default 200)\n"
      "  -fplugin-arg-memprof-hot-density=X       density above which a "
      "context is hot (default 1000)\n"
      "  -fplugin-arg-memprof-global-hot-density=X  accesses per byte from "
      "which a global variable is hot: section .data.hot.NAME... (default "
      "1)\n"
      "  -fplugin-arg-memprof-global-cold-size=N  bytes from which a global "
      "never accessed is cold: section .data.unlikely.NAME... (default 64; "
      "link with -Wl,--sort-section=name to group them)\n"
      "  -fplugin-arg-memprof-thresholds=run|llvm  relative to the run "
      "(default) or LLVM's absolute ones (implied by cold-density, "
      "cold-lifetime, hot-density)\n"
      "  -fplugin-arg-memprof-cold-lifetime-share=P  mean lifetime, in % of "
      "the run's length, a cold context must reach (default 10)\n"
      "  -fplugin-arg-memprof-cold-density-ratio=X  density below X times "
      "the run's median is cold (default 0.25)\n"
      "  -fplugin-arg-memprof-hot-density-ratio=X   density above X times "
      "the run's median is hot (default 4)\n";

struct feedback_options feedback_options
    = { NULL, false, false, true, true, { 0.05, 200 * 1000.0, 1000 } };

/* ---- Arguments ---- */

static const char any_number[] = "a number of 0 or more";

bool
feedback_parse_number (const char *key, const char *value, const char *expected,
                       double *result)
{
  char *end;
  double number = value ? strtod (value, &end) : -1;
  if (value == NULL || *value == '\0' || *end != '\0' || number < 0)
    {
      error ("memprof: bad value %qs in %<-fplugin-arg-memprof-%s%>: "
             "expected %s",
             value ? value : "", key, expected);
      return false;
    }
  *result = number;
  return true;
}

/* ---- Thresholds: LLVM's absolute ones, or relative to the run ---- */

enum thresholds_kind
{
  THRESHOLDS_DEFAULT, /* relative to the run: nothing was said */
  THRESHOLDS_RUN,     /* thresholds=run */
  THRESHOLDS_LLVM     /* thresholds=llvm, or an absolute threshold given */
};

static enum thresholds_kind thresholds_kind;
static const char *thresholds_set_by;
static struct feedback_run_thresholds run_thresholds
    = feedback_default_run_thresholds;

/* Whether switching to KIND (set by option KEY) agrees with the options
   before it.  */
static bool
set_thresholds_kind (enum thresholds_kind kind, const char *key)
{
  if (thresholds_kind != THRESHOLDS_DEFAULT && thresholds_kind != kind)
    {
      error ("memprof: %<-fplugin-arg-memprof-%s%> and "
             "%<-fplugin-arg-memprof-%s%> disagree: the thresholds are "
             "either the absolute ones of LLVM (cold-density, cold-lifetime, "
             "hot-density, thresholds=llvm) or relative to the run "
             "(cold-lifetime-share, cold-density-ratio, hot-density-ratio, "
             "thresholds=run)",
             thresholds_set_by, key);
      return false;
    }
  thresholds_kind = kind;
  thresholds_set_by = key;
  return true;
}

static bool
absolute_threshold (const char *key)
{
  return set_thresholds_kind (THRESHOLDS_LLVM, key);
}

static bool
run_threshold_argument (const char *key, const char *value, bool *ok)
{
  double number = 0;
  if (strcmp (key, "thresholds") == 0)
    {
      if (value != NULL && strcmp (value, "run") == 0)
        *ok &= set_thresholds_kind (THRESHOLDS_RUN, "thresholds=run");
      else if (value != NULL && strcmp (value, "llvm") == 0)
        *ok &= set_thresholds_kind (THRESHOLDS_LLVM, "thresholds=llvm");
      else
        {
          error ("memprof: bad value %qs in "
                 "%<-fplugin-arg-memprof-thresholds%>: expected %<run%> or "
                 "%<llvm%>",
                 value ? value : "");
          *ok = false;
        }
    }
  else if (strcmp (key, "cold-lifetime-share") == 0)
    {
      if (feedback_parse_number (key, value, "a percentage, 0 to 100", &number)
          && number <= 100 && set_thresholds_kind (THRESHOLDS_RUN, key))
        run_thresholds.cold_lifetime_share = number / 100;
      else
        {
          if (number > 100)
            error ("memprof: bad value %qs in "
                   "%<-fplugin-arg-memprof-%s%>: expected a percentage, 0 "
                   "to 100",
                   value, key);
          *ok = false;
        }
    }
  else if (strcmp (key, "cold-density-ratio") == 0)
    *ok &= feedback_parse_number (key, value, any_number,
                                  &run_thresholds.cold_density_ratio)
           && set_thresholds_kind (THRESHOLDS_RUN, key);
  else if (strcmp (key, "hot-density-ratio") == 0)
    *ok &= feedback_parse_number (key, value, any_number,
                                  &run_thresholds.hot_density_ratio)
           && set_thresholds_kind (THRESHOLDS_RUN, key);
  else
    return false;
  return true;
}

/* Unless LLVM's thresholds were asked for: those that fit the profile's
   run, and a note saying what they are.  */
static void
fit_thresholds (void)
{
  if (thresholds_kind == THRESHOLDS_LLVM)
    return;
  struct feedback_run run;
  feedback_measure_run (&feedback_profile, &run);
  feedback_fit_thresholds (&run, &run_thresholds, &feedback_options.thresholds);
  if (feedback_options.remarks && feedback_profile.context_count > 0)
    {
      char text[300];
      snprintf (text, sizeof text,
                "run of %.0f ms, median density %.3g accesses/byte/s: cold "
                "is a mean lifetime of %.0f ms or more and a density below "
                "%.3g, hot a density above %.3g",
                run.length_ms, run.median_density,
                feedback_options.thresholds.cold_lifetime_ms,
                feedback_options.thresholds.cold_density,
                feedback_options.thresholds.hot_density);
      inform (UNKNOWN_LOCATION, "memprof: thresholds for this profile: %s",
              text);
    }
}

/* -fplugin-arg-memprof-columns: 1 or 0 as given, -1 when not given (then
   0 for a unit compiled from preprocessed input, else 1).  */
static int columns_option = -1;

bool
feedback_argument (const char *key, const char *value, bool *ok)
{
  double seconds;
  bool flag;
  if (strcmp (key, "use") == 0)
    {
      if (value == NULL || *value == '\0')
        {
          error ("memprof: %<-fplugin-arg-memprof-use%> needs a file: "
                 "%<-fplugin-arg-memprof-use=app.mprof%>");
          *ok = false;
        }
      feedback_options.use = value;
    }
  else if (strcmp (key, "remarks") == 0)
    *ok &= parse_flag (key, value, &feedback_options.remarks);
  else if (strcmp (key, "hot-cold-new") == 0)
    *ok &= parse_flag (key, value, &feedback_options.hot_cold_new);
  else if (strcmp (key, "hint") == 0)
    *ok &= parse_flag (key, value, &feedback_options.hint);
  else if (strcmp (key, "clone-wrappers") == 0)
    *ok &= parse_flag (key, value, &feedback_options.clone);
  else if (strcmp (key, "columns") == 0)
    {
      if (parse_flag (key, value, &flag))
        columns_option = flag;
      else
        *ok = false;
    }
  else if (strcmp (key, "cold-density") == 0)
    *ok &= feedback_parse_number (key, value, any_number,
                                  &feedback_options.thresholds.cold_density)
           && absolute_threshold (key);
  else if (strcmp (key, "hot-density") == 0)
    *ok &= feedback_parse_number (key, value, any_number,
                                  &feedback_options.thresholds.hot_density)
           && absolute_threshold (key);
  else if (globals_argument (key, value, ok)
           || context_hints_argument (key, value, ok)
           || clone_argument (key, value, ok))
    ;
  else if (strcmp (key, "cold-lifetime") == 0)
    {
      if (feedback_parse_number (key, value, any_number, &seconds)
          && absolute_threshold (key))
        feedback_options.thresholds.cold_lifetime_ms = seconds * 1000;
      else
        *ok = false;
    }
  else if (run_threshold_argument (key, value, ok))
    ;
  else
    return false;
  return true;
}

bool
feedback_enabled (void)
{
  return feedback_options.use != NULL;
}

/* ---- The profile, indexed by the leaf function of each context ---- */

struct feedback feedback_profile;

leaf_entry *leaf_index;

/* For this unit: which contexts some call matched, and the functions
   compiled here (to tell the profile's contexts that belong to this unit
   but matched nothing: stale ones).  */
static unsigned char *context_matched;
static vec<uint64_t> unit_functions;

struct feedback_unit feedback_unit;

static int
compare_leaf_entries (const void *a, const void *b)
{
  const leaf_entry *x = (const leaf_entry *) a, *y = (const leaf_entry *) b;
  if (x->guid != y->guid)
    return x->guid < y->guid ? -1 : 1;
  return x->context < y->context ? -1 : x->context > y->context;
}

/* ---- Allocation functions ---- */

const struct allocation_function allocation_functions[ALLOCATION_FUNCTIONS] = {
  { "malloc", FAMILY_C },
  { "calloc", FAMILY_C },
  { "realloc", FAMILY_C },
  { "aligned_alloc", FAMILY_C },
  { "posix_memalign", FAMILY_C },
  { "memalign", FAMILY_C },
  { "strdup", FAMILY_C },
  { "strndup", FAMILY_C },
  { "_Znwm", FAMILY_NEW },
  { "_Znam", FAMILY_NEW },
  { "_ZnwmRKSt9nothrow_t", FAMILY_NEW },
  { "_ZnamRKSt9nothrow_t", FAMILY_NEW },
  { "_ZnwmSt11align_val_t", FAMILY_NEW },
  { "_ZnamSt11align_val_t", FAMILY_NEW },
  { "_ZnwmSt11align_val_tRKSt9nothrow_t", FAMILY_NEW },
  { "_ZnamSt11align_val_tRKSt9nothrow_t", FAMILY_NEW },
};

/* The hinted replacements, built on first use: [function][hot?].  */
static GTY (()) tree hinted_decls[ALLOCATION_FUNCTIONS];

static const struct ggc_root_tab feedback_roots[]
    = { { hinted_decls, ALLOCATION_FUNCTIONS, sizeof (tree),
          &gt_ggc_mx_tree_node, &gt_pch_nx_tree_node },
        LAST_GGC_ROOT_TAB };

/* Which allocation function CALL calls: an index in allocation_functions,
   or -1.  A function of the program's own with such a name is not one:
   the library's are external.  */
int
allocation_function (gcall *call)
{
  tree fndecl = gimple_call_fndecl (call);
  if (fndecl == NULL_TREE || !TREE_PUBLIC (fndecl) || !DECL_EXTERNAL (fndecl))
    return -1;
  const char *name = IDENTIFIER_POINTER (DECL_ASSEMBLER_NAME (fndecl));
  for (unsigned i = 0; i < ALLOCATION_FUNCTIONS; i++)
    if (strcmp (name, allocation_functions[i].name) == 0)
      return (int) i;
  return -1;
}

/* ---- A call's frames, as LLVM's frames ---- */

/* The function DWARF describes for FN: its abstract origin, through
   clones and inlining.  */
static tree
origin_of (tree fn)
{
  while (DECL_ABSTRACT_ORIGIN (fn) != NULL_TREE
         && DECL_ABSTRACT_ORIGIN (fn) != fn)
    fn = DECL_ABSTRACT_ORIGIN (fn);
  return fn;
}

/* The name DWARF gives FN, which is what LLVM hashes into its GUID: the
   linkage name where GCC emits DW_AT_linkage_name (public functions
   whose assembler name is not their name), else DW_AT_name.  */
static const char *
dwarf_function_name (tree fn)
{
  if (TREE_PUBLIC (fn) && DECL_ASSEMBLER_NAME_SET_P (fn)
      && DECL_ASSEMBLER_NAME (fn) != DECL_NAME (fn))
    return IDENTIFIER_POINTER (DECL_ASSEMBLER_NAME (fn));
  if (DECL_NAME (fn) == NULL_TREE)
    return "";
  const char *name = lang_hooks.dwarf_name (fn, 0);
  return name ? name : IDENTIFIER_POINTER (DECL_NAME (fn));
}

static void
set_frame (struct frame *frame, tree fn, location_t loc, bool inlined)
{
  fn = origin_of (fn);
  frame->name = dwarf_function_name (fn);
  frame->guid = profile_guid (frame->name);
  frame->line_offset = (uint32_t) (LOCATION_LINE (loc) - DECL_SOURCE_LINE (fn));
  frame->column = (uint32_t) LOCATION_COLUMN (loc);
  frame->inlined = inlined;
}

/* The frames of STMT, innermost first: a frame for each function inlined
   around it (the inliner's outermost scope of each, whose origin is the
   inlined function and whose source location is the call that was
   inlined), and last the function being compiled.  Returns the count.  */
unsigned
call_frames (gimple *stmt, struct frame *frames)
{
  return call_frames_at (gimple_location (stmt), gimple_block (stmt), frames);
}

/* The same for a call at LOC in BLOCK (an RTL call's location).  */
unsigned
call_frames_at (location_t loc, tree block_of_call, struct frame *frames)
{
  unsigned count = 0;
  for (tree block = block_of_call;
       block != NULL_TREE && TREE_CODE (block) == BLOCK
       && count + 1 < MAX_CHAIN;
       block = BLOCK_SUPERCONTEXT (block))
    if (inlined_function_outer_scope_p (block))
      {
        tree inlined = block_ultimate_origin (block);
        if (inlined == NULL_TREE || TREE_CODE (inlined) != FUNCTION_DECL)
          continue;
        set_frame (&frames[count++], inlined, loc, true);
        loc = BLOCK_SOURCE_LOCATION (block);
      }
  set_frame (&frames[count++], current_function_decl, loc, false);
  return count;
}

/* Does the profile's CONTEXT start with the COUNT frames of CHAIN?  As
   LLVM's use pass: line offsets compared in 16 bits, columns only when
   the profile has columns, inline flags not at all.  */
bool
context_starts_with (const struct feedback_context *context,
                     const struct frame *chain, unsigned count)
{
  if (context->frame_count < count)
    return false;
  for (unsigned i = 0; i < count; i++)
    {
      const struct feedback_frame *f
          = &feedback_profile.frames[context->first_frame + i];
      if (!same_call_site (f->guid, f->line_offset, f->column, chain[i].guid,
                           chain[i].line_offset, chain[i].column))
        return false;
    }
  return true;
}

/* ---- Rewriting ---- */

/* An external function NAME of FNDECL's type with an argument of
   EXTRA_TYPE appended: a hinted form of the allocation function FNDECL.  */
tree
declare_hinted_function (const char *name, tree fndecl, tree extra_type)
{
  tree type = TREE_TYPE (fndecl);
  auto_vec<tree> params;
  for (tree arg = TYPE_ARG_TYPES (type);
       arg && TREE_VALUE (arg) != void_type_node; arg = TREE_CHAIN (arg))
    params.safe_push (TREE_VALUE (arg));
  params.safe_push (extra_type);
  tree hinted_type = build_function_type_array (
      TREE_TYPE (type), params.length (), params.address ());
  tree decl = build_fn_decl (name, hinted_type);
  TREE_PUBLIC (decl) = 1;
  DECL_EXTERNAL (decl) = 1;
  DECL_IS_MALLOC (decl) = DECL_IS_MALLOC (fndecl);
  /* Only the throwing operator new may throw.  */
  TREE_NOTHROW (decl) = TREE_NOTHROW (fndecl);
  return decl;
}

/* The hinted replacement of allocation function INDEX, whose declaration
   is FNDECL: the same function type with an unsigned char appended.  */
static tree
hinted_decl (unsigned index, tree fndecl)
{
  if (hinted_decls[index] != NULL_TREE)
    return hinted_decls[index];
  char name[96];
  if (allocation_functions[index].family == FAMILY_C)
    snprintf (name, sizeof name, "__memprof_hint_%s",
              allocation_functions[index].name);
  else
    snprintf (name, sizeof name, "%s12__hot_cold_t",
              allocation_functions[index].name);
  hinted_decls[index]
      = declare_hinted_function (name, fndecl, unsigned_char_type_node);
  return hinted_decls[index];
}

/* Replace the call at GSI with a call of DECL with the same arguments
   and EXTRA_ARGUMENT.  */
void
replace_call (gimple_stmt_iterator *gsi, tree decl, tree extra_argument)
{
  gcall *call = as_a<gcall *> (gsi_stmt (*gsi));
  tree fndecl = gimple_call_fndecl (call);
  unsigned nargs = gimple_call_num_args (call);
  auto_vec<tree> args;
  for (unsigned i = 0; i < nargs; i++)
    args.safe_push (gimple_call_arg (call, i));
  args.safe_push (extra_argument);
  gcall *replacement = gimple_build_call_vec (decl, args);
  gimple_call_set_lhs (replacement, gimple_call_lhs (call));
  gimple_set_location (replacement, gimple_location (call));
  gimple_set_block (replacement, gimple_block (call));
  gimple_call_set_nothrow (replacement, gimple_call_nothrow_p (call));
  gimple_move_vops (replacement, call);
  /* True: the replacement takes over the call's exception region, so that
     a throwing operator new still lands in its handler.  */
  gsi_replace (gsi, replacement, true);
  cgraph_update_edges_for_call_stmt (call, fndecl, replacement);
}

/* Replace the call at GSI (allocation function INDEX) with its hinted
   form.  */
void
rewrite_call (gimple_stmt_iterator *gsi, unsigned index, unsigned char hint)
{
  tree fndecl = gimple_call_fndecl (gsi_stmt (*gsi));
  replace_call (gsi, hinted_decl (index, fndecl),
                build_int_cst (unsigned_char_type_node, hint));
}

/* The first entry of leaf_index whose function is GUID.  */
size_t
first_with_leaf (uint64_t guid)
{
  size_t low = 0, high = feedback_profile.context_count;
  while (low < high)
    {
      size_t middle = (low + high) / 2;
      if (leaf_index[middle].guid < guid)
        low = middle + 1;
      else
        high = middle;
    }
  return low;
}

/* Contexts that start with the frames of a call that is not an
   allocation: they allocate further down, in a callee this unit does not
   see.  */
#define REACHED_THROUGH_A_CALL 2

static void
mark_reached (const struct frame *chain, unsigned count)
{
  for (size_t i = first_with_leaf (chain[0].guid);
       i < feedback_profile.context_count
       && leaf_index[i].guid == chain[0].guid;
       i++)
    if (context_matched[leaf_index[i].context] == 0
        && context_starts_with (
            &feedback_profile.contexts[leaf_index[i].context], chain, count))
      context_matched[leaf_index[i].context] = REACHED_THROUGH_A_CALL;
}

/* ---- Why a call is ambiguous ---- */

/* Are frames A and B the same call, as LLVM's use pass compares them?  */
static bool
same_profile_frame (const struct feedback_frame *a,
                    const struct feedback_frame *b)
{
  return same_call_site (a->guid, a->line_offset, a->column, b->guid,
                         b->line_offset, b->column);
}

/* The caller depth at which contexts X and Y, which agree on their first
   SKIP frames (the call's own), first differ: 1 for the first caller
   frame; a context that ends first differs there.  0 when they never
   differ.  */
static unsigned
first_difference (const struct feedback_context *x,
                  const struct feedback_context *y, unsigned skip)
{
  for (unsigned depth = 1;; depth++)
    {
      unsigned i = skip + depth - 1;
      bool x_has = i < x->frame_count, y_has = i < y->frame_count;
      if (!x_has && !y_has)
        return 0;
      if (x_has != y_has
          || !same_profile_frame (&feedback_profile.frames[x->first_frame + i],
                                  &feedback_profile.frames[y->first_frame + i]))
        return depth;
    }
}

/* Why the COUNT contexts of MATCHED (their classes in CLASSES), which
   start with a call's SKIP frames, are ambiguous: the share of their
   bytes in each class, and the depth of callers that tells the classes
   apart (the deepest first difference between two contexts of different
   classes), or that none does.  Written into BUFFER.  */
static void
explain_ambiguity (const unsigned *matched, const unsigned char *classes,
                   unsigned count, unsigned skip, char *buffer, size_t size)
{
  double bytes[3] = { 0, 0, 0 }, total = 0;
  unsigned separate = 0;
  bool inseparable = false;

  for (unsigned i = 0; i < count; i++)
    {
      const struct feedback_context *context
          = &feedback_profile.contexts[matched[i]];
      bytes[classes[i]] += (double) context->mib.total_size;
      total += (double) context->mib.total_size;
      for (unsigned j = 0; j < i && !inseparable; j++)
        if (classes[i] != classes[j])
          {
            unsigned depth = first_difference (
                context, &feedback_profile.contexts[matched[j]], skip);
            if (depth == 0)
              inseparable = true;
            else if (depth > separate)
              separate = depth;
          }
    }
  int length
      = total <= 0
            ? snprintf (buffer, size, "no byte counts; ")
            : snprintf (buffer, size,
                        "bytes %.1f%% cold, %.1f%% hot, %.1f%% notcold; ",
                        100 * bytes[FEEDBACK_COLD] / total,
                        100 * bytes[FEEDBACK_HOT] / total,
                        100 * bytes[FEEDBACK_NOT_COLD] / total);
  if (length < 0 || (size_t) length >= size)
    return;
  if (inseparable)
    snprintf (buffer + length, size - length,
              "contexts of different classes have the same callers: no "
              "depth of callers tells them apart");
  else if (separate == 1)
    snprintf (buffer + length, size - length,
              "the first caller tells the classes apart");
  else
    snprintf (buffer + length, size - length,
              "callers disagree at depth 1 and tell the classes apart at "
              "depth %u",
              separate);
}

/* Is the current function called only through pointers (no direct call
   in this unit, its address taken, no clone made for its callers, as
   -flto's speculative devirtualization does)?  Then no clone of it can
   be called in its callers' place.  */
static bool
reached_only_indirectly (void)
{
  cgraph_node *node = cgraph_node::get (current_function_decl);
  return node != NULL && node->callers == NULL && node->address_taken
         && !wrapper_cloned (current_function_decl);
}

/* See feedback-internal.h.  */
uint64_t
function_guid (tree fn)
{
  return profile_guid (dwarf_function_name (origin_of (fn)));
}

/* ---- Per function ---- */

static void
describe_frames (pretty_printer *pp, const struct frame *frames, unsigned count)
{
  for (unsigned i = 0; i < count; i++)
    pp_printf (pp, "%s%s:%u:%u%s", i ? " < " : "", frames[i].name,
               frames[i].line_offset, frames[i].column,
               frames[i].inlined ? " (inlined)" : "");
}

void
feedback_function (void)
{
  struct frame chain[MAX_CHAIN];
  tree self = origin_of (current_function_decl);
  context_hints_function ();
  unit_functions.safe_push (profile_guid (dwarf_function_name (self)));

  basic_block bb;
  FOR_EACH_BB_FN (bb, cfun)
  for (gimple_stmt_iterator gsi = gsi_start_bb (bb); !gsi_end_p (gsi);
       gsi_next (&gsi))
    {
      gcall *call = dyn_cast<gcall *> (gsi_stmt (gsi));
      if (call == NULL || gimple_call_internal_p (call))
        continue;
      int index = allocation_function (call);
      unsigned count = call_frames (call, chain);
      if (index < 0)
        {
          /* A call through which contexts reach an allocation made in
             another function or library (printf's buffer): not stale.  */
          mark_reached (chain, count);
          continue;
        }
      feedback_unit.calls++;

      /* The contexts that start with this call's frames.  */
      size_t low = first_with_leaf (chain[0].guid);
      unsigned matched = 0, classes[3] = { 0, 0, 0 };
      auto_vec<unsigned> matched_contexts;
      auto_vec<unsigned char> matched_classes;
      double density_sum = 0, lifetime_sum = 0, allocations = 0;
      for (size_t i = low; i < feedback_profile.context_count
                           && leaf_index[i].guid == chain[0].guid;
           i++)
        {
          const struct feedback_context *context
              = &feedback_profile.contexts[leaf_index[i].context];
          if (!context_starts_with (context, chain, count))
            continue;
          matched++;
          context_matched[leaf_index[i].context] = 1;
          enum feedback_class context_class
              = feedback_classify (context, &feedback_options.thresholds);
          classes[context_class]++;
          matched_contexts.safe_push (leaf_index[i].context);
          matched_classes.safe_push ((unsigned char) context_class);
          density_sum
              += (double) context->mib.total_lifetime_access_density / 100.0;
          lifetime_sum += (double) context->mib.total_lifetime;
          allocations += context->mib.alloc_count;
        }

      const char *function = allocation_functions[index].name;
      const char *verdict;
      char why[400] = "";
      enum feedback_class site_class = FEEDBACK_NOT_COLD;
      bool ambiguous = false;
      if (matched == 0)
        verdict = "no context matched";
      else
        {
          feedback_unit.matched++;
          unsigned kinds
              = (classes[0] != 0) + (classes[1] != 0) + (classes[2] != 0);
          if (kinds > 1)
            {
              ambiguous = true;
              feedback_unit.ambiguous++;
              verdict = "ambiguous: its contexts disagree";
              explain_ambiguity (matched_contexts.address (),
                                 matched_classes.address (), matched, count,
                                 why, sizeof why);
              if (reached_only_indirectly ())
                {
                  size_t used = strlen (why);
                  snprintf (why + used, sizeof why - used,
                            "; %s is reached only through function "
                            "pointers, so no clone can be called in its "
                            "place",
                            chain[count - 1].name);
                }
            }
          else
            {
              site_class = classes[FEEDBACK_COLD]  ? FEEDBACK_COLD
                           : classes[FEEDBACK_HOT] ? FEEDBACK_HOT
                                                   : FEEDBACK_NOT_COLD;
              verdict = feedback_class_name (site_class);
            }
        }

      /* What to do with it.  */
      const char *action = "left alone";
      char context_action[256] = "";
      bool by_context = ambiguous && feedback_options.hint
                        && context_hints_rewrite (
                            &gsi, (unsigned) index, matched_contexts.address (),
                            matched_classes.address (), matched, count,
                            context_action, sizeof context_action);
      /* Declined by context hints: the reason, and no rewrite.  */
      bool declined = !by_context && context_action[0] != '\0';
      if (by_context || declined)
        action = context_action;
      bool family_on = allocation_functions[index].family == FAMILY_C
                           ? feedback_options.hint
                           : feedback_options.hot_cold_new;
      if (!ambiguous && matched > 0 && site_class != FEEDBACK_NOT_COLD
          && family_on)
        action = allocation_functions[index].family == FAMILY_C
                     ? "calls the hinted entry point"
                     : "calls the __hot_cold_t operator new";

      if (dump_file)
        {
          pretty_printer pp;
          describe_frames (&pp, chain, count);
          fprintf (
              dump_file,
              "memprof-use: %s call at %s:%d:%d: frames %s: "
              "%u context%s matched (%u cold, %u hot, %u notcold): %s%s%s%s; "
              "%s\n",
              function, LOCATION_FILE (gimple_location (call)),
              LOCATION_LINE (gimple_location (call)),
              LOCATION_COLUMN (gimple_location (call)), pp_formatted_text (&pp),
              matched, matched == 1 ? "" : "s", classes[FEEDBACK_COLD],
              classes[FEEDBACK_HOT], classes[FEEDBACK_NOT_COLD], verdict,
              why[0] ? " (" : "", why, why[0] ? ")" : "", action);
        }
      if (feedback_options.remarks && matched > 0)
        {
          /* GCC's diagnostics format no floating point: text first.  */
          char figures[160];
          snprintf (figures, sizeof figures,
                    "%u context%s, %.0f allocations, lifetime access density "
                    "%.3g accesses/byte/s, mean lifetime %.3g s",
                    matched, matched == 1 ? "" : "s", allocations,
                    allocations > 0 ? density_sum / allocations : 0.0,
                    allocations > 0 ? lifetime_sum / allocations / 1000 : 0.0);
          if (why[0])
            inform (gimple_location (call),
                    "memprof: %qs call: %s (%s; %s); %s", function, verdict,
                    figures, why, action);
          else
            inform (gimple_location (call), "memprof: %qs call: %s (%s); %s",
                    function, verdict, figures, action);
        }

      if (!by_context && !declined && strcmp (action, "left alone") != 0)
        {
          rewrite_call (&gsi, (unsigned) index,
                        site_class == FEEDBACK_COLD ? HINT_COLD : HINT_HOT);
          feedback_unit.rewritten[site_class]++;
          if (dump_file)
            {
              fprintf (dump_file, "memprof-use: rewritten: ");
              print_gimple_stmt (dump_file, gsi_stmt (gsi), 0, TDF_NONE);
            }
        }
    }
}

/* ---- Per unit ---- */

static int
compare_guids (const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
  return x < y ? -1 : x > y;
}

/* The summary line; and the warning when nothing of this unit is in the
   profile.  */
/* How many functions defined in this unit some frame of the profile
   names.  */
static unsigned
functions_in_profile (void)
{
  auto_vec<uint64_t> guids;
  for (size_t i = 0; i < feedback_profile.frame_count; i++)
    guids.safe_push (feedback_profile.frames[i].guid);
  guids.qsort (compare_guids);
  unsigned named = 0;
  cgraph_node *node;
  FOR_EACH_DEFINED_FUNCTION (node)
  {
    if (node->inlined_to || node->clone_of)
      continue;
    uint64_t guid = profile_guid (dwarf_function_name (origin_of (node->decl)));
    if (bsearch (&guid, guids.address (), guids.length (), sizeof (uint64_t),
                 compare_guids)
        != NULL)
      named++;
  }
  return named;
}

/* Under -flto, what this unit's step did and did not: the compile step
   leaves the cloning across units and the speculative devirtualization to
   the link step, which does them only when its command line loads the
   plugin too (the driver passes lto1 the link line's -fplugin options,
   not the compile step's); the link step says what it did.  */
static void
lto_summary (const char *unit_name)
{
  if (flag_generate_lto && !in_lto_p)
    {
      /* Only a unit whose functions the profile names has something to
         lose: the others stay quiet (a large program has many).  */
      unsigned named = functions_in_profile ();
      if (named > 0)
        fprintf (stderr,
                 "memprof: %s: -flto: the feedback for its %u function%s in "
                 "the profile (hints, wrapper cloning across units, "
                 "speculative devirtualization) is left to the link step; "
                 "it is applied only if the link command has "
                 "-fplugin=memprof and -fplugin-arg-memprof-use=%s too\n",
                 unit_name, named, named == 1 ? "" : "s", feedback_options.use);
    }
  else if (in_lto_p && !flag_wpa && feedback_options.clone)
    {
      unsigned across, devirtualized;
      clone_lto_counts (&across, &devirtualized);
      fprintf (stderr,
               "memprof: %s: -flto: %u wrapper clones for callers in other "
               "units; %u indirect calls speculatively devirtualized\n",
               unit_name, across, devirtualized);
    }
}

static void
finish_unit (void *, void *)
{
  if (seen_error ())
    return;
  unit_functions.qsort (compare_guids);
  unsigned matched = 0, stale = 0;
  for (size_t i = 0; i < feedback_profile.context_count; i++)
    {
      if (context_matched[i] == REACHED_THROUGH_A_CALL)
        continue;
      if (context_matched[i])
        {
          matched++;
          continue;
        }
      /* The context's allocating function: its first frame not inlined.  */
      const struct feedback_context *context = &feedback_profile.contexts[i];
      unsigned k = 0;
      while (k + 1 < context->frame_count
             && feedback_profile.frames[context->first_frame + k].inlined)
        k++;
      uint64_t guid = feedback_profile.frames[context->first_frame + k].guid;
      if (bsearch (&guid, unit_functions.address (), unit_functions.length (),
                   sizeof (uint64_t), compare_guids)
          != NULL)
        stale++;
    }
  const char *unit_name = main_input_filename ? main_input_filename : "<stdin>";
  unsigned hot_globals, cold_globals;
  globals_counts (&hot_globals, &cold_globals);
  fprintf (stderr,
           "memprof: %s: profile %s: %zu contexts; %u matched here, %u "
           "unmatched (stale); %u of %u allocation calls matched, %u "
           "ambiguous; %u wrapper clones; rewritten: %u cold, %u hot; "
           "globals: %u hot, %u cold; context-classified: %u\n",
           unit_name, feedback_options.use, feedback_profile.context_count,
           matched, stale, feedback_unit.matched, feedback_unit.calls,
           feedback_unit.ambiguous, clone_count (),
           feedback_unit.rewritten[FEEDBACK_COLD],
           feedback_unit.rewritten[FEEDBACK_HOT], hot_globals, cold_globals,
           context_hints_count ());
  lto_summary (unit_name);
  if (feedback_unit.calls > 0 && feedback_unit.matched == 0 && stale == 0
      && feedback_profile.context_count > 0)
    warning_at (UNKNOWN_LOCATION, 0,
                "memprof: none of the %u allocation calls of %qs is in the "
                "profile %qs (%lu contexts, none in the %u "
                "functions of this unit): is it a profile of another program?",
                feedback_unit.calls, unit_name, feedback_options.use,
                (unsigned long) feedback_profile.context_count,
                unit_functions.length ());
}

/* Was this unit compiled from preprocessed input?  The driver passes
   -fpreprocessed to cc1 for a .i or .ii file, and the user may give it.  */
static bool
preprocessed_input (void)
{
  for (unsigned i = 0; i < save_decoded_options_count; i++)
    if (save_decoded_options[i].opt_index == OPT_fpreprocessed
        && save_decoded_options[i].value)
      return true;
  return false;
}

bool
feedback_start (const char *plugin_name)
{
  char message[1024];
  feedback_init (&feedback_profile);
  if (feedback_load (&feedback_profile, feedback_options.use, message,
                     sizeof message)
      != 0)
    {
      error ("memprof: cannot use the profile: %s", message);
      return false;
    }
  /* A unit compiled from preprocessed input (-save-temps, `gcc -E` then
     the .i, distcc and icecc) has lost its macros: a call that a macro
     expanded sits at its column in the expanded text, where a build from
     the source, and DWARF, put it at the macro's name.  Lines survive
     (the .i's line markers), columns do not: match by lines, as for a
     profile without columns.  columns=0 does so for any unit: for a
     build from the source using the profile of a build from preprocessed
     input, which nothing in the binary tells.  */
  if (columns_option == 0 || (columns_option < 0 && preprocessed_input ()))
    feedback_profile.has_columns = false;
  fit_thresholds ();
  leaf_index = XNEWVEC (leaf_entry, feedback_profile.context_count + 1);
  for (size_t i = 0; i < feedback_profile.context_count; i++)
    {
      leaf_index[i].guid
          = feedback_profile.frames[feedback_profile.contexts[i].first_frame]
                .guid;
      leaf_index[i].context = (unsigned) i;
    }
  qsort (leaf_index, feedback_profile.context_count, sizeof *leaf_index,
         compare_leaf_entries);
  context_matched
      = XCNEWVEC (unsigned char, feedback_profile.context_count + 1);
  register_callback (plugin_name, PLUGIN_REGISTER_GGC_ROOTS, NULL,
                     (void *) feedback_roots);
  register_callback (plugin_name, PLUGIN_FINISH_UNIT, finish_unit, NULL);
  globals_start (plugin_name, &feedback_profile, feedback_options.remarks);
  context_hints_start (plugin_name);
  /* The cloning of wrappers: a simple IPA pass after the early local
     passes, before the IPA passes that inline, with every body in SSA
     form (GCC places a pass only next to one of the same type: after
     "targetclone", the simple IPA pass there).  */
  register_pass_after (plugin_name, make_clone_pass (g, false), "targetclone",
                       1);
  /* Under -flto, again in lto1 once inlining is applied: a late simple
     IPA pass, before "simdclone" (and before memprof-stack-params, which
     reads the calls the clones change).  */
  register_pass_before (plugin_name, make_clone_pass (g, true), "simdclone", 1);
  /* And in WPA, the last regular IPA pass: before the partitioning.  */
  register_pass_before (plugin_name, make_lto_partition_pass (g), "comdats", 1);
  return true;
}
