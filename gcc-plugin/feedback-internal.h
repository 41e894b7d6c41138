/* What profile feedback (feedback.cc) shares with its cloning of
   allocation wrappers (clone.cc): the profile and its index, the options,
   the unit's counts, the allocation functions, LLVM's frames of a call,
   and the rewriting of a call to its hinted form.  Included after GCC's
   headers and analysis' feedback.h.  */

#ifndef MEMPROF_PLUGIN_FEEDBACK_INTERNAL_H
#define MEMPROF_PLUGIN_FEEDBACK_INTERNAL_H

/* The hint bytes, as LLVM's use pass gives them to tcmalloc.  */
#define HINT_COLD 1
#define HINT_HOT 254

struct feedback_options
{
  const char *use; /* the profile */
  bool remarks;
  bool hot_cold_new;
  bool hint;
  bool clone;
  struct feedback_thresholds thresholds;
};

extern struct feedback_options feedback_options;

/* The profile, and its contexts sorted by their leaf function.  */
extern struct feedback feedback_profile;

struct leaf_entry
{
  uint64_t guid;
  unsigned context;
};

extern leaf_entry *leaf_index;

/* The first entry of leaf_index whose function is GUID.  */
size_t first_with_leaf (uint64_t guid);

/* The profile's GUID of function FN (its DWARF name's, through clones
   and inlining).  */
uint64_t function_guid (tree fn);

/* The unit's counts, for the summary line.  */
struct feedback_unit
{
  unsigned calls;        /* allocation calls seen */
  unsigned matched;      /* of which some context matched */
  unsigned ambiguous;    /* matched contexts of more than one class */
  unsigned rewritten[3]; /* by enum feedback_class */
};

extern struct feedback_unit feedback_unit;

/* ---- Allocation functions ---- */

enum allocation_family
{
  FAMILY_C,  /* the malloc family: the shim's __memprof_hint_ entry points */
  FAMILY_NEW /* operator new: tcmalloc's __hot_cold_t overloads */
};

struct allocation_function
{
  const char *name;
  enum allocation_family family;
};

extern const struct allocation_function allocation_functions[16];
#define ALLOCATION_FUNCTIONS 16

/* Which allocation function CALL calls: an index in allocation_functions,
   or -1.  */
int allocation_function (gcall *call);

/* Replace the call at GSI (allocation function INDEX) with its hinted
   form.  */
void rewrite_call (gimple_stmt_iterator *gsi, unsigned index,
                   unsigned char hint);

/* An external function NAME of FNDECL's type with an argument of
   EXTRA_TYPE appended.  */
tree declare_hinted_function (const char *name, tree fndecl, tree extra_type);

/* Replace the call at GSI with a call of DECL with the same arguments
   and EXTRA_ARGUMENT.  */
void replace_call (gimple_stmt_iterator *gsi, tree decl, tree extra_argument);

/* ---- A call's frames, as LLVM's frames ---- */

struct frame
{
  uint64_t guid;
  uint32_t line_offset;
  uint32_t column;
  bool inlined;
  const char *name;
};

#define MAX_CHAIN 64

/* The frames of STMT in the current function, innermost first (inlined
   functions, then the function): returns the count.  */
unsigned call_frames (gimple *stmt, struct frame *frames);
unsigned call_frames_at (location_t loc, tree block, struct frame *frames);

/* Are two frames (GUID, line offset, column each) the same call, as
   LLVM's use pass compares them: line offsets in 16 bits, columns only
   when the profile has columns, inline flags not at all?  */
static inline bool
same_call_site (uint64_t guid_a, uint32_t line_a, uint32_t column_a,
                uint64_t guid_b, uint32_t line_b, uint32_t column_b)
{
  return guid_a == guid_b && (line_a & 0xffff) == (line_b & 0xffff)
         && (!feedback_profile.has_columns || column_a == column_b);
}

/* Does the profile's CONTEXT start with the COUNT frames of CHAIN?  */
bool context_starts_with (const struct feedback_context *context,
                          const struct frame *chain, unsigned count);

/* ---- The cloning pass (clone.cc) ---- */

/* The compile-time instance, or with LATE the link-time one (-flto).  */
opt_pass *make_clone_pass (gcc::context *context, bool late);

/* The wrapper clones made in this unit.  */
unsigned clone_count (void);

/* Was DECL cloned for some of its callers in this unit?  */
bool wrapper_cloned (tree decl);

/* Under -flto: the clones made for callers in other units, and the
   indirect calls speculatively devirtualized.  */
void clone_lto_counts (unsigned *across, unsigned *devirtualized);

/* A caller of a wrapper, as the contexts see it: the frame after the
   wrapper's frames, the classes of its contexts, and one of them.  */
struct caller_group
{
  struct frame frame;
  unsigned classes[3];
  unsigned first_context;
  bool chained; /* mixed, and told apart by a clone chain above it */
};

/* A clone chain's bounds: the functions of a chain (the wrapper, then
   the callers cloned to call its clones; clone_depth, at most
   MAX_CHAIN_DEPTH), and the size of a caller cloned so, in GIMPLE
   statements.  */
#define MAX_CHAIN_DEPTH 6
#define MAX_CHAINED_STATEMENTS 200
extern unsigned clone_depth;

/* Handle -fplugin-arg-memprof-clone-depth=N as feedback_argument does
   its own.  */
bool clone_argument (const char *key, const char *value, bool *ok);

/* The profile's contexts that start with the COUNT frames of PREFIX and
   go on, grouped in GROUPS by their next frame (a caller's call) with
   their classes.  */
void group_callers (const struct frame *prefix, unsigned count,
                    vec<caller_group> *groups);

/* The one class of GROUP's contexts, or -1 when they disagree.  */
int group_class (const struct caller_group *group);

/* ---- Under -flto, in WPA (lto_partition.cc) ---- */

/* The pass that keeps the wrappers to clone with their callers in one
   link-time unit.  */
opt_pass *make_lto_partition_pass (gcc::context *context);

/* ---- Context hints (context_hints.cc) ---- */

/* Handle -fplugin-arg-memprof-context-hints=0|1 as feedback_argument
   does its own.  */
bool context_hints_argument (const char *key, const char *value, bool *ok);

/* Index the profile's caller frames, keep frame pointers, and register
   the labelling of return addresses; after the profile is loaded.  */
void context_hints_start (const char *plugin_name);

/* Rewrite the ambiguous allocation call at GSI (allocation function
   INDEX, CALL_FRAMES frames of its own) to a context-classified entry
   point, from the COUNT contexts of MATCHED with classes CLASSES.  True
   when it did, with what it did in ACTION.  */
bool context_hints_rewrite (gimple_stmt_iterator *gsi, unsigned index,
                            const unsigned *matched,
                            const unsigned char *classes, unsigned count,
                            unsigned call_frames, char *action,
                            size_t action_size);

/* Per function, before its calls are matched: keep as calls the tail
   calls the profiled build kept (sibcalls.cc), so that the frames the
   tables compare are on the stack.  */
void context_hints_function (void);

/* The calls rewritten so in this unit.  */
unsigned context_hints_count (void);

#endif /* MEMPROF_PLUGIN_FEEDBACK_INTERNAL_H */
