/* memprof-use: context hints.  An allocation call whose profile contexts
   disagree (some cold, some hot or not cold) is rewritten to
   __memprof_hint_context_NAME of libmemprof_hint, which classifies each
   allocation by its calling context at run time
   (include/memprof/hint_context.h is the contract, docs/feedback.md
   "Context hints" the user's side).  Two halves:

   - At the ambiguous call: the table of its contexts, each reduced to
     its first DEPTH caller frames, DEPTH the shortest that tells the
     classes apart (the deepest first difference between two contexts of
     different classes).  A caller frame is a physical frame: the
     profile's frames of one return address (the inline chain of the
     call, innermost first), hashed into a frame key.  Contexts that
     agree on DEPTH frames go to the class with most bytes; only cold
     and hot entries are kept (everything else is the default).

   - At every call of the unit whose frame key some profile context has
     at a caller position, or that is in a function such a frame is in
     (whatever function it calls, directly or through a pointer): a
     label right after the call instruction, its return address, listed
     with the key in an ELF note.  A frame no note names is unknown and
     matches any key; a call whose line moved since the profile is named,
     and matches nothing.  This runs in an
     RTL pass just before "shorten" and "final", when no pass moves instructions any
     more, so the label's address is the call's return address.  The
     notes of all units of all loaded objects are what the library reads
     to name return addresses: across translation units, without LTO.

   The library walks frame pointers: with a profile, the plugin keeps
   them in the functions whose frames the walks read and where they
   change where the bytes go ("Which functions keep a frame pointer"
   below), and keeps as calls the tail calls that may allocate, as the
   profiled build did
   (sibcalls.cc), and the tail calls whose frames the profile has (the
   profiled build made them calls), so that the frames on the stack are
   the profile's.  */

#include "gcc-plugin.h"

#include "tree.h"
#include "tree-pass.h"
#include "context.h"
#include "function.h"
#include "basic-block.h"
#include "gimple.h"
#include "gimple-iterator.h"
#include "stringpool.h"
#include "cgraph.h"
#include "diagnostic-core.h"
#include "rtl.h"
#include "memmodel.h"
#include "emit-rtl.h"
#include "output.h"
#include "varasm.h"
#include "options.h"

#include "plugin.h"
#include "feedback.h"
#include "pass.h"
#include "sibcalls.h"

#include "../formats/feedback.h"
#include "memprof/hint_context.h"

#include "feedback-internal.h"

static bool context_hints_on = true;

/* A table compares the fewest caller frames that place all but this
   share of the call's bytes where comparing all would.  */
#define CONTEXT_BYTES_TOLERANCE 0.01

/* The frame keys the profile's contexts have at caller positions, and
   the GUIDs of the functions those frames are in, sorted: a call is
   labelled when it has such a key, or when it is in such a function
   (its key then tells that the frame is not the profile's: a line that
   moved does not match, as an unknown frame would).  */
static vec<uint64_t> caller_keys;
static vec<uint64_t> caller_functions;

/* The unit's labelled calls: the label's number and the frame key.  */
struct labelled_call
{
  int label;
  uint64_t key;
};

static vec<labelled_call> labelled_calls;
static unsigned classified_calls;

/* A call is classified by context only when its cold and hot entries
   hold at least this share of its bytes (percent): below it, the walk
   on every allocation costs more than placing so few bytes gains.  */
static double context_min_share = 2.0;

bool
context_hints_argument (const char *key, const char *value, bool *ok)
{
  if (strcmp (key, "context-min-share") == 0)
    {
      char *end = NULL;
      double share = value != NULL ? strtod (value, &end) : -1;
      if (value == NULL || end == value || *end != '\0' || share < 0
          || share > 100)
        {
          error ("memprof: bad value %qs in "
                 "%<-fplugin-arg-memprof-context-min-share%>: expected a "
                 "percentage from 0 to 100",
                 value ? value : "");
          *ok = false;
        }
      else
        context_min_share = share;
      return true;
    }
  if (strcmp (key, "context-hints") != 0)
    return false;
  *ok &= parse_flag (key, value, &context_hints_on);
  return true;
}

unsigned
context_hints_count (void)
{
  return classified_calls;
}

/* ---- Frame keys ---- */

#define KEY_SEED 0x6d656d70726f66ULL

/* Add a frame to the key H as LLVM's use pass compares frames: line
   offsets in 16 bits, columns only when the profile has columns.  */
static uint64_t
key_add (uint64_t h, uint64_t guid, uint32_t line_offset, uint32_t column)
{
  uint64_t where = (line_offset & 0xffff);
  if (feedback_profile.has_columns)
    where |= (uint64_t) column << 16;
  return memprof_context_mix (memprof_context_mix (h ^ guid) ^ where);
}

/* 0 is the tables' wildcard.  */
static uint64_t
key_finish (uint64_t h)
{
  return h != 0 ? h : 1;
}

/* The key of the physical frame of CONTEXT that starts at its frame
   FIRST (the frames up to the first not inlined); *NEXT is the frame
   after it.  */
static uint64_t
profile_frame_key (const struct feedback_context *context, unsigned first,
                   unsigned *next)
{
  uint64_t h = KEY_SEED;
  unsigned i = first;
  while (i < context->frame_count)
    {
      const struct feedback_frame *frame
          = &feedback_profile.frames[context->first_frame + i++];
      h = key_add (h, frame->guid, frame->line_offset, frame->column);
      if (!frame->inlined)
        break;
    }
  *next = i;
  return key_finish (h);
}

static uint64_t
chain_key (const struct frame *chain, unsigned count)
{
  uint64_t h = KEY_SEED;
  for (unsigned i = 0; i < count; i++)
    h = key_add (h, chain[i].guid, chain[i].line_offset, chain[i].column);
  return key_finish (h);
}

static int
compare_keys (const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
  return x < y ? -1 : x > y;
}

/* ---- Labelling the return addresses (RTL, before "final") ---- */

static bool
sorted_contains (const vec<uint64_t> &sorted, uint64_t value)
{
  return bsearch (&value, sorted.address (), sorted.length (),
                  sizeof (uint64_t), compare_keys)
         != NULL;
}

/* Sort VALUES and drop repeats.  */
static void
sort_unique (vec<uint64_t> *values)
{
  values->qsort (compare_keys);
  unsigned kept = 0;
  for (unsigned i = 0; i < values->length (); i++)
    if (kept == 0 || (*values)[i] != (*values)[kept - 1])
      (*values)[kept++] = (*values)[i];
  values->truncate (kept);
}

/* Label the calls of the current function whose key a context has.  */
static unsigned int
label_calls (void)
{
  struct frame chain[MAX_CHAIN];
  for (rtx_insn *insn = get_insns (); insn != NULL; insn = NEXT_INSN (insn))
    {
      if (!CALL_P (insn) || SIBLING_CALL_P (insn)
          || find_reg_note (insn, REG_NORETURN, NULL_RTX) != NULL_RTX)
        continue;
      location_t loc = INSN_LOCATION (insn);
      if (LOCATION_LOCUS (loc) == UNKNOWN_LOCATION)
        continue;
      unsigned count = call_frames_at (loc, LOCATION_BLOCK (loc), chain);
      uint64_t key = chain_key (chain, count);
      if (!sorted_contains (caller_keys, key)
          && !sorted_contains (caller_functions, chain[count - 1].guid))
        continue;
      rtx_code_label *label = gen_label_rtx ();
      /* Kept although no jump refers to it.  */
      LABEL_PRESERVE_P (label) = 1;
      emit_label_after (label, insn);
      labelled_call call = { (int) CODE_LABEL_NUMBER (label), key };
      labelled_calls.safe_push (call);
    }
  return 0;
}

static const pass_data label_calls_pass_data = {
  RTL_PASS, "memprof-context-sites", OPTGROUP_NONE, TV_NONE, 0, 0, 0, 0, 0,
};

class label_calls_pass : public rtl_opt_pass
{
public:
  label_calls_pass (gcc::context *context)
      : rtl_opt_pass (label_calls_pass_data, context)
  {
  }

  bool
  gate (function *) final override
  {
    return !caller_keys.is_empty ();
  }

  unsigned int
  execute (function *) final override
  {
    return label_calls ();
  }
};

/* The note of the unit's labelled calls, at the end of its assembly
   (pushsection: GCC's idea of the current section stays true).  */
static void
write_note (void *, void *)
{
  char label[64];
  if (seen_error () || labelled_calls.is_empty () || asm_out_file == NULL)
    return;
  fprintf (asm_out_file,
           "\t.pushsection\t%s,\"a\",@note\n"
           "\t.balign\t4\n"
           "\t.long\t%u\n"
           "\t.long\t.Lmemprof_sites_end-.Lmemprof_sites_start\n"
           "\t.long\t%#x\n"
           "\t.asciz\t\"%s\"\n"
           "\t.balign\t4\n"
           ".Lmemprof_sites_start:\n",
           MEMPROF_CONTEXT_NOTE_SECTION,
           (unsigned) sizeof MEMPROF_CONTEXT_NOTE_OWNER,
           MEMPROF_CONTEXT_NOTE_TYPE, MEMPROF_CONTEXT_NOTE_OWNER);
  for (const labelled_call &call : labelled_calls)
    {
      ASM_GENERATE_INTERNAL_LABEL (label, "L", call.label);
      fputs ("\t.long\t", asm_out_file);
      assemble_name_raw (asm_out_file, label);
      fprintf (asm_out_file, "-.\n\t.long\t%#x\n\t.long\t%#x\n",
               (unsigned) (call.key & 0xffffffff), (unsigned) (call.key >> 32));
    }
  fputs (".Lmemprof_sites_end:\n\t.balign\t4\n\t.popsection\n", asm_out_file);
}

/* The entry point __memprof_hint_context_NAME for FNDECL: its type with
   a pointer appended.  */
static GTY (()) tree context_decls[ALLOCATION_FUNCTIONS];

static const struct ggc_root_tab context_roots[]
    = { { context_decls, ALLOCATION_FUNCTIONS, sizeof (tree),
          &gt_ggc_mx_tree_node, &gt_pch_nx_tree_node },
        LAST_GGC_ROOT_TAB };

/* ---- Frame pointers where the walk goes ---- */

/* The functions (GUIDs, sorted) that keep their frame pointer for the
   walks of context-classified calls (find_walk_functions); a unit whose
   functions are on no such walk (a program whose calls all decline, m4's
   xmalloc) keeps the build's frame pointers and their cost.  */
static vec<uint64_t> walk_functions;
/* The functions a walk reads whose frame pointer the simulation left
   out (sorted): a small one keeps it all the same.  */
static vec<uint64_t> walk_omitted;
/* Every function a walk reads (sorted), and each at the position just
   above a walk (its call site is the last key compared): only there
   does a tail call change what a walk sees, so only there do calls
   keep their frames.  */
static vec<uint64_t> walk_read;
static bool user_keeps_frame_pointers;

/* Below this many instructions before register allocation, a function
   a walk reads keeps its frame pointer even where the simulation left it
   out: it costs little there, and a function with registers to spare may
   never touch %rbp, which would pass its caller's frame pointer on and
   make the walk skip its frame (the return addresses above one position
   early) instead of ending there, as the simulation assumes.  */
#define SMALL_FUNCTION_INSNS 200

static void find_walk_functions (void);

/* The current function's instructions (debug ones not counted).  */
static unsigned
instruction_count (void)
{
  unsigned count = 0;
  for (rtx_insn *insn = get_insns (); insn != NULL; insn = NEXT_INSN (insn))
    count += NONDEBUG_INSN_P (insn);
  return count;
}

/* Before "ira": the current function keeps its frame pointer when a walk
   may read its frame, else it gets the build's choice (the value the
   first function saw, before this pass changed it).  */
static unsigned int
set_frame_pointer (void)
{
  static int build_choice = -1;
  if (build_choice < 0)
    build_choice = global_options.x_flag_omit_frame_pointer;
  uint64_t guid = function_guid (current_function_decl);
  bool keep = user_keeps_frame_pointers
              || sorted_contains (walk_functions, guid)
              || (sorted_contains (walk_omitted, guid)
                  && instruction_count () < SMALL_FUNCTION_INSNS);
  global_options.x_flag_omit_frame_pointer = keep ? 0 : build_choice;
  return 0;
}

static const pass_data frame_pointers_pass_data = {
  RTL_PASS, "memprof-frame-pointers", OPTGROUP_NONE, TV_NONE, 0, 0, 0, 0, 0,
};

class frame_pointers_pass : public rtl_opt_pass
{
public:
  frame_pointers_pass (gcc::context *context)
      : rtl_opt_pass (frame_pointers_pass_data, context)
  {
  }

  unsigned int
  execute (function *) final override
  {
    return set_frame_pointer ();
  }
};

void
context_hints_start (const char *plugin_name)
{
  if (!context_hints_on || !feedback_options.hint)
    return;
  for (size_t c = 0; c < feedback_profile.context_count; c++)
    {
      const struct feedback_context *context = &feedback_profile.contexts[c];
      unsigned next;
      profile_frame_key (context, 0, &next);
      while (next < context->frame_count)
        {
          caller_keys.safe_push (profile_frame_key (context, next, &next));
          caller_functions.safe_push (
              feedback_profile.frames[context->first_frame + next - 1].guid);
        }
    }
  sort_unique (&caller_keys);
  sort_unique (&caller_functions);

  /* The library walks frame pointers through the functions of the
     contexts it may have to tell apart: those get them (walk_functions,
     before "ira", which decides a function's frame pointer), the others
     keep the build's choice.  */
  find_walk_functions ();
  user_keeps_frame_pointers = global_options_set.x_flag_omit_frame_pointer
                              && !global_options.x_flag_omit_frame_pointer;
  register_pass_before (plugin_name, new frame_pointers_pass (g), "ira", 1);
  /* Just before "shorten", which gives every instruction its address
     for "final" (a label added later has none): after the last pass
     that moves instructions.  */
  register_pass_before (plugin_name, new label_calls_pass (g), "shorten", 1);
  register_callback (plugin_name, PLUGIN_FINISH_UNIT, write_note, NULL);
  register_callback (plugin_name, PLUGIN_REGISTER_GGC_ROOTS, NULL,
                     (void *) context_roots);
}

/* Clear the tail-call mark of each call of the current function whose
   frame key some profile context has at a caller position: the profiled
   build made it an ordinary call (built with -fno-optimize-sibling-calls,
   or at -O1), so its frame is on the profile's stacks and must be on
   ours, or every context through it is one frame short at run time and
   matches no entry.  A tail call the profiled build made as well leaves
   no frame in the profile and keeps its mark.  */
static void
keep_profiled_frames (void)
{
  struct frame chain[MAX_CHAIN];
  basic_block bb;

  FOR_EACH_BB_FN (bb, cfun)
  for (gimple_stmt_iterator gsi = gsi_start_bb (bb); !gsi_end_p (gsi);
       gsi_next (&gsi))
    {
      gcall *call = dyn_cast<gcall *> (gsi_stmt (gsi));
      if (call == NULL || !gimple_call_tail_p (call)
          || gimple_call_must_tail_p (call))
        continue;
      unsigned count = call_frames (call, chain);
      if (sorted_contains (caller_keys, chain_key (chain, count)))
        gimple_call_set_tail (call, false);
    }
}

/* Calls keep their frames as in the profile only in the functions a
   walk reads (walk_read): a program whose calls all decline (m4, whose
   xmalloc's cold contexts hold too few bytes) keeps its tail calls,
   memchr2's of memchr among them, and runs the code the build without a
   profile runs.  */
void
context_hints_function (void)
{
  if (context_hints_on && feedback_options.hint
      && sorted_contains (walk_read, function_guid (current_function_decl)))
    {
      keep_allocation_frames ();
      keep_profiled_frames ();
    }
}

/* ---- The table of an ambiguous call ---- */

struct context_row
{
  uint64_t keys[MEMPROF_CONTEXT_MAX_DEPTH]; /* 0 past the context's end */
  double bytes[3];                          /* by enum feedback_class */
  unsigned wildcards;
  unsigned char hint;
};

/* The first caller depth (1-based) at which rows A and B differ, 0 when
   they agree on MEMPROF_CONTEXT_MAX_DEPTH frames.  */
static unsigned
first_difference (const context_row *a, const context_row *b)
{
  for (unsigned d = 0; d < MEMPROF_CONTEXT_MAX_DEPTH; d++)
    if (a->keys[d] != b->keys[d])
      return d + 1;
  return 0;
}

static int
compare_rows (const void *a, const void *b)
{
  const context_row *x = (const context_row *) a, *y = (const context_row *) b;
  if (x->wildcards != y->wildcards)
    return x->wildcards < y->wildcards ? -1 : 1;
  return memcmp (x->keys, y->keys, sizeof x->keys);
}

/* Merge ROWS that agree on their first DEPTH frames into ENTRIES (keys
   past DEPTH cleared), each of its class with most bytes (in HINT, as
   an enum feedback_class).  Returns the bytes so placed in the class
   the profile gave them.  */
static double
merge_rows (const vec<context_row> &rows, unsigned depth,
            vec<context_row> *entries)
{
  entries->truncate (0);
  for (context_row row : rows)
    {
      memset (row.keys + depth, 0,
              (MEMPROF_CONTEXT_MAX_DEPTH - depth) * sizeof row.keys[0]);
      bool merged = false;
      for (context_row &entry : *entries)
        if (memcmp (entry.keys, row.keys, sizeof row.keys) == 0)
          {
            for (unsigned c = 0; c < 3; c++)
              entry.bytes[c] += row.bytes[c];
            merged = true;
            break;
          }
      if (!merged)
        entries->safe_push (row);
    }
  double placed = 0;
  for (context_row &entry : *entries)
    {
      unsigned best = FEEDBACK_NOT_COLD;
      for (unsigned c = 0; c < 3; c++)
        if (entry.bytes[c] > entry.bytes[best])
          best = c;
      entry.hint = (unsigned char) best;
      placed += entry.bytes[best];
    }
  return placed;
}

/* The table for ROWS (each of the class the profile gives it, in HINT):
   its depth (returned; *FULL_DEPTH the one that tells all classes
   apart), its cold and hot ENTRIES (hints HINT_COLD and HINT_HOT, in the
   order the library tries them), the rows' bytes *TOTAL and the bytes
   the entries place in the class the profile gives them, *PLACED.  */
static unsigned
choose_table (const vec<context_row> &rows, vec<context_row> *entries,
              double *total, double *placed, unsigned *full_depth)
{
  /* The depth that tells the classes apart: the deepest first
     difference of two contexts of different classes.  Two that agree on
     all MEMPROF_CONTEXT_MAX_DEPTH frames are one entry at any depth,
     of the class with more bytes.  */
  unsigned depth = 0;
  for (unsigned i = 0; i < rows.length (); i++)
    for (unsigned j = 0; j < i; j++)
      if (rows[i].hint != rows[j].hint)
        depth = MAX (depth, first_difference (&rows[i], &rows[j]));
  if (depth == 0)
    depth = 1;

  /* The shortest depth that still places nearly all bytes where the
     full depth does: each frame more costs every allocation of the call
     a step of the walk.  */
  *total = 0;
  for (const context_row &row : rows)
    *total += row.bytes[0] + row.bytes[1] + row.bytes[2];
  double full = merge_rows (rows, depth, entries);
  *full_depth = depth;
  for (unsigned d = 1; d < *full_depth; d++)
    if (merge_rows (rows, d, entries)
        >= full - CONTEXT_BYTES_TOLERANCE * *total)
      {
        depth = d;
        break;
      }
  merge_rows (rows, depth, entries);

  /* Only cold and hot entries: everything else is the default.  */
  unsigned kept = 0;
  *placed = 0;
  for (context_row &entry : *entries)
    {
      if (entry.hint == FEEDBACK_NOT_COLD)
        continue;
      *placed += entry.bytes[entry.hint];
      entry.hint = entry.hint == FEEDBACK_COLD ? HINT_COLD : HINT_HOT;
      entry.wildcards = 0;
      for (unsigned d = 0; d < depth; d++)
        entry.wildcards += entry.keys[d] == 0;
      (*entries)[kept++] = entry;
    }
  entries->truncate (kept);
  entries->qsort (compare_rows);
  return depth;
}

/* ---- Which functions keep a frame pointer ----

   The library reads the return address of caller frame D (0-based) in
   the frame of the function at position D (position 0: the allocating
   function, position D + 1: the function of caller frame D), reached by
   the frame-pointer chain: a table of depth DEPTH reads the frames of
   the functions at positions 0 to DEPTH - 1, and no other.  A function
   there without a frame pointer ends what the walk can name: its own
   frame and all above are unknown (key 0 at run time, which matches any
   key of an entry).  Each unit decides the same from the same profile:
   for each call the rewrite will classify (its contexts, grouped by
   their first physical frame, tables chosen as the rewrite chooses
   them), the functions at the positions its walk reads, less those whose
   frame pointer changes where the call's bytes go by less than
   CONTEXT_BYTES_TOLERANCE of them: the functions on the most walks are
   tried first (an interpreter's loop, luaV_execute in Lua, is on nearly
   every context, and a frame pointer in it costs the whole program),
   each kept out when the walks of every call still place their bytes
   as with all frame pointers, less the tolerance.  */

struct walk_group
{
  vec<context_row> rows;    /* hint: the profile's class */
  vec<context_row> entries; /* the table */
  vec<uint64_t> functions;  /* rows x depth: the function at each position */
  vec<uint64_t> last;       /* per row: the function at position depth */
  unsigned depth;
  double full, total;
};

struct keyed_context
{
  uint64_t key;
  unsigned context;
};

static int
compare_keyed_contexts (const void *a, const void *b)
{
  const keyed_context *x = (const keyed_context *) a;
  const keyed_context *y = (const keyed_context *) b;
  return x->key < y->key ? -1 : x->key > y->key;
}

/* As the library's entry_matches: a 0 on either side matches any key,
   and an entry with keys must match one.  */
static bool
walk_entry_matches (const context_row &entry, unsigned depth,
                    const uint64_t *keys)
{
  bool named = false, equal = false;
  for (unsigned d = 0; d < depth; d++)
    {
      if (entry.keys[d] != 0 && keys[d] != 0 && entry.keys[d] != keys[d])
        return false;
      named |= entry.keys[d] != 0;
      equal |= entry.keys[d] != 0 && entry.keys[d] == keys[d];
    }
  return equal || !named;
}

/* The bytes of GROUP placed in the class the profile gives them when the
   functions of OMITTED (sorted) have no frame pointer.  */
static double
walk_placed (const walk_group &group, const vec<uint64_t> &omitted)
{
  double placed = 0;
  for (unsigned r = 0; r < group.rows.length (); r++)
    {
      const context_row &row = group.rows[r];
      uint64_t keys[MEMPROF_CONTEXT_MAX_DEPTH];
      bool known = true;
      for (unsigned d = 0; d < group.depth; d++)
        {
          known = known
                  && !sorted_contains (omitted,
                                       group.functions[r * group.depth + d]);
          keys[d] = known ? row.keys[d] : 0;
        }
      unsigned klass = FEEDBACK_NOT_COLD;
      for (const context_row &entry : group.entries)
        if (walk_entry_matches (entry, group.depth, keys))
          {
            klass = entry.hint == HINT_COLD ? FEEDBACK_COLD : FEEDBACK_HOT;
            break;
          }
      placed += row.bytes[klass];
    }
  return placed;
}

/* The groups of contexts (one per allocation call) the rewrite will
   classify, with their tables.  */
static void
find_walk_groups (vec<walk_group> *groups)
{
  size_t count = feedback_profile.context_count;
  keyed_context *contexts = XNEWVEC (keyed_context, count + 1);
  unsigned next;
  for (size_t c = 0; c < count; c++)
    {
      contexts[c].key
          = profile_frame_key (&feedback_profile.contexts[c], 0, &next);
      contexts[c].context = (unsigned) c;
    }
  qsort (contexts, count, sizeof *contexts, compare_keyed_contexts);
  for (size_t first = 0, last; first < count; first = last)
    {
      walk_group group;
      memset (&group, 0, sizeof group);
      for (last = first;
           last < count && contexts[last].key == contexts[first].key; last++)
        {
          const struct feedback_context *context
              = &feedback_profile.contexts[contexts[last].context];
          context_row row;
          memset (&row, 0, sizeof row);
          row.hint = feedback_classify (context, &feedback_options.thresholds);
          row.bytes[row.hint] = context->mib.total_size > 0
                                    ? (double) context->mib.total_size
                                    : 1.0;
          unsigned at;
          profile_frame_key (context, 0, &at);
          for (unsigned d = 0;
               d < MEMPROF_CONTEXT_MAX_DEPTH && at < context->frame_count; d++)
            row.keys[d] = profile_frame_key (context, at, &at);
          group.rows.safe_push (row);
        }
      double placed;
      unsigned full_depth;
      unsigned kinds = 0;
      for (unsigned k = 0; k < 3; k++)
        for (const context_row &row : group.rows)
          if (row.bytes[k] > 0)
            {
              kinds++;
              break;
            }
      if (kinds >= 2)
        group.depth = choose_table (group.rows, &group.entries, &group.total,
                                    &placed, &full_depth);
      if (kinds < 2 || group.entries.is_empty ()
          || placed < context_min_share / 100 * group.total)
        {
          group.rows.release ();
          group.entries.release ();
          continue;
        }
      /* The function at each position of each row: the outermost
         (not inlined) frame of each physical frame.  */
      for (size_t i = first; i < last; i++)
        {
          const struct feedback_context *context
              = &feedback_profile.contexts[contexts[i].context];
          unsigned at = 0;
          for (unsigned d = 0; d <= group.depth; d++)
            {
              uint64_t guid = 0;
              if (at < context->frame_count)
                {
                  profile_frame_key (context, at, &at);
                  guid = feedback_profile.frames[context->first_frame + at - 1]
                             .guid;
                }
              if (d < group.depth)
                group.functions.safe_push (guid);
              else
                group.last.safe_push (guid);
            }
        }
      auto_vec<uint64_t> none;
      group.full = walk_placed (group, none);
      groups->safe_push (group);
    }
  XDELETEVEC (contexts);
}

struct function_count
{
  uint64_t guid;
  unsigned walks;
};

static int
compare_function_counts (const void *a, const void *b)
{
  const function_count *x = (const function_count *) a;
  const function_count *y = (const function_count *) b;
  if (x->walks != y->walks)
    return x->walks > y->walks ? -1 : 1;
  return x->guid < y->guid ? -1 : x->guid > y->guid;
}

static void
find_walk_functions (void)
{
  auto_vec<walk_group> groups;
  find_walk_groups (&groups);

  /* Every function a walk reads, with the number of rows it is on.  */
  auto_vec<uint64_t> read;
  for (const walk_group &group : groups)
    for (uint64_t guid : group.functions)
      if (guid != 0)
        read.safe_push (guid);
  read.qsort (compare_keys);
  /* Calls keep their frames in these and in the function at position
     DEPTH, which holds the last call site compared: its tail call
     would take that call site off the stack.  */
  for (uint64_t guid : read)
    walk_read.safe_push (guid);
  for (const walk_group &group : groups)
    for (uint64_t guid : group.last)
      if (guid != 0)
        walk_read.safe_push (guid);
  sort_unique (&walk_read);
  auto_vec<function_count> candidates;
  for (unsigned i = 0; i < read.length (); i++)
    if (candidates.is_empty () || candidates.last ().guid != read[i])
      {
        function_count candidate = { read[i], 1 };
        candidates.safe_push (candidate);
      }
    else
      candidates.last ().walks++;
  candidates.qsort (compare_function_counts);

  auto_vec<uint64_t> omitted;
  for (const function_count &candidate : candidates)
    {
      omitted.safe_push (candidate.guid);
      omitted.qsort (compare_keys);
      bool fine = true;
      for (const walk_group &group : groups)
        if (walk_placed (group, omitted)
            < group.full - CONTEXT_BYTES_TOLERANCE * group.total)
          {
            fine = false;
            break;
          }
      if (!fine)
        {
          for (unsigned i = 0; i < omitted.length (); i++)
            if (omitted[i] == candidate.guid)
              {
                omitted.ordered_remove (i);
                break;
              }
        }
    }
  for (const function_count &candidate : candidates)
    if (!sorted_contains (omitted, candidate.guid))
      walk_functions.safe_push (candidate.guid);
  sort_unique (&walk_functions);
  for (uint64_t guid : omitted)
    walk_omitted.safe_push (guid);
  for (walk_group &group : groups)
    {
      group.rows.release ();
      group.entries.release ();
      group.functions.release ();
      group.last.release ();
    }
}

/* The static table of the rows, DEPTH keys each, named for the call at
   LOC.  */
static tree
build_table (const vec<context_row> &rows, unsigned depth, location_t loc)
{
  tree word = long_long_unsigned_type_node;
  unsigned words = MEMPROF_CONTEXT_HEADER_WORDS + rows.length () * (1 + depth);
  vec<constructor_elt, va_gc> *elements = NULL;
  unsigned index = 0;
#define PUSH_WORD(value)                                                       \
  CONSTRUCTOR_APPEND_ELT (elements, size_int (index++), (value))

  char name[512];
  snprintf (name, sizeof name, "%s:%d %s", LOCATION_FILE (loc),
            LOCATION_LINE (loc),
            IDENTIFIER_POINTER (DECL_NAME (current_function_decl)));
  tree description = build_string_literal (strlen (name) + 1, name);

  PUSH_WORD (build_int_cstu (word, MEMPROF_CONTEXT_MAGIC << 32
                                       | MEMPROF_CONTEXT_VERSION));
  PUSH_WORD (build_int_cstu (word, (uint64_t) rows.length () << 32 | depth));
  PUSH_WORD (fold_convert (word, description));
  while (index < MEMPROF_CONTEXT_HEADER_WORDS)
    PUSH_WORD (build_int_cstu (word, 0));
  for (const context_row &row : rows)
    {
      PUSH_WORD (build_int_cstu (word, row.hint));
      for (unsigned d = 0; d < depth; d++)
        PUSH_WORD (build_int_cstu (word, row.keys[d]));
    }
#undef PUSH_WORD

  tree type = build_array_type_nelts (word, words);
  tree decl = build_decl (loc, VAR_DECL,
                          create_tmp_var_name ("memprof_context"), type);
  TREE_STATIC (decl) = 1;
  TREE_PUBLIC (decl) = 0;
  TREE_USED (decl) = 1;
  TREE_ADDRESSABLE (decl) = 1;
  DECL_ARTIFICIAL (decl) = 1;
  DECL_IGNORED_P (decl) = 1;
  /* Output although made after the IPA passes, which list what is.  */
  DECL_PRESERVE_P (decl) = 1;
  SET_DECL_ALIGN (decl, 64);
  DECL_INITIAL (decl) = build_constructor (type, elements);
  varpool_node::finalize_decl (decl);
  return decl;
}

static tree
context_decl (unsigned index, tree fndecl)
{
  if (context_decls[index] != NULL_TREE)
    return context_decls[index];
  char name[96];
  snprintf (name, sizeof name, "__memprof_hint_context_%s",
            allocation_functions[index].name);
  tree decl = declare_hinted_function (name, fndecl, ptr_type_node);
  context_decls[index] = decl;
  return decl;
}

bool
context_hints_rewrite (gimple_stmt_iterator *gsi, unsigned index,
                       const unsigned *matched, const unsigned char *classes,
                       unsigned count, unsigned call_frames, char *action,
                       size_t action_size)
{
  if (!context_hints_on || allocation_functions[index].family != FAMILY_C)
    return false;

  /* Each context's first caller frames.  */
  auto_vec<context_row> rows;
  for (unsigned i = 0; i < count; i++)
    {
      const struct feedback_context *context
          = &feedback_profile.contexts[matched[i]];
      context_row row;
      memset (&row, 0, sizeof row);
      unsigned next = call_frames;
      for (unsigned d = 0;
           d < MEMPROF_CONTEXT_MAX_DEPTH && next < context->frame_count; d++)
        row.keys[d] = profile_frame_key (context, next, &next);
      /* A profile without sizes (hand-written YAML): each context
         weighs one byte.  */
      row.bytes[classes[i]] = context->mib.total_size > 0
                                  ? (double) context->mib.total_size
                                  : 1.0;
      row.hint = classes[i];
      rows.safe_push (row);
    }

  auto_vec<context_row> entries;
  double total, placed;
  unsigned full_depth;
  unsigned depth = choose_table (rows, &entries, &total, &placed, &full_depth);
  if (entries.is_empty ())
    return false;
  if (placed < context_min_share / 100 * total)
    {
      snprintf (action, action_size,
                "left alone: its cold and hot contexts hold %.1f%% of its "
                "bytes, below context-min-share=%g%% (classifying costs "
                "every allocation a walk of %u frames)",
                total > 0 ? 100 * placed / total : 0.0, context_min_share,
                depth);
      return false;
    }

  gcall *call = as_a<gcall *> (gsi_stmt (*gsi));
  tree fndecl = gimple_call_fndecl (call);
  tree table = build_table (entries, depth, gimple_location (call));
  replace_call (gsi, context_decl (index, fndecl),
                build_fold_addr_expr (table));
  classified_calls++;
  snprintf (action, action_size,
            "calls the context-classified entry point (%u cold or hot "
            "contexts, told apart by %u caller frame%s; %u for all)",
            entries.length (), depth, depth == 1 ? "" : "s", full_depth);
  return true;
}
