/* What the instrumentation's files share: the plugin's options, the
   reasons an access is or is not instrumented, and a memory access as
   accesses.cc finds it.  Included after GCC's headers.  */

#ifndef MEMPROF_PLUGIN_PLUGIN_H
#define MEMPROF_PLUGIN_PLUGIN_H

/* ---- Options (parsed in memprof.cc) ---- */

enum stack_analysis
{
  STACK_ANALYSIS_NONE,
  STACK_ANALYSIS_BASIC,
  STACK_ANALYSIS_FULL
};

/* Which counter updates are combined (combine.cc).  */
enum combine
{
  COMBINE_NONE,
  COMBINE_BLOCK, /* one update for the accesses of a block to one counter */
  COMBINE_LOOP   /* and counted in a register over a loop without calls */
};

struct plugin_options
{
  bool callbacks;
  bool reads, writes, globals;
  bool histogram;
  enum stack_analysis stack_analysis;
  bool other_frames; /* rules 5 and 6 of stack_analysis.cc */
  bool stats;
  enum combine combine;
  int instrument; /* 1, 0, or -1: unless -fplugin-arg-memprof-use */
};

extern struct plugin_options plugin_options;

/* A 0|1 argument -fplugin-arg-memprof-KEY=VALUE (no VALUE: 1) into
   *RESULT; false, with an error naming it, for any other VALUE.  */
bool parse_flag (const char *key, const char *value, bool *result);

/* ---- Why an access was or was not instrumented ---- */

enum verdict
{
  INSTRUMENT,
  SKIP_LOCAL_VARIABLE,   /* its base is an automatic variable of this frame */
  SKIP_ALLOCA,           /* a pointer straight from alloca or a VLA */
  SKIP_POINTER_TO_STACK, /* a pointer chain that leads only to the above */
  SKIP_POINTS_TO_STACK,  /* points-to set of this frame's locals only */
  SKIP_CALLERS_FRAMES,   /* a pointer parameter every caller passes stack */
  SKIP_POINTS_TO_OTHER_FRAMES, /* points-to set of any function's locals */
  SKIP_READS_DISABLED,         /* reads=0 */
  SKIP_WRITES_DISABLED,        /* writes=0 */
  SKIP_GLOBALS_DISABLED,       /* globals=0 */
  SKIP_NOT_ADDRESSABLE,        /* no address can be taken (register-like) */
  VERDICT_COUNT
};

/* The verdicts that skip an access as stack: SKIP_LOCAL_VARIABLE to this.  */
#define LAST_STACK_VERDICT SKIP_POINTS_TO_OTHER_FRAMES

/* ---- A memory access of a function (accesses.cc) ---- */

enum access_kind
{
  ACCESS_LOAD,
  ACCESS_STORE,
  ACCESS_RANGE_LOAD,
  ACCESS_RANGE_STORE
};

struct memory_access
{
  gimple *stmt;
  tree ref;     /* the reference, or NULL for a range or pointer access */
  tree address; /* for range and pointer accesses */
  tree length;  /* for ranges */
  enum access_kind kind;
};

/* Counts for one function and for the translation unit.  */
struct access_counts
{
  unsigned verdicts[VERDICT_COUNT];
  unsigned loads, stores, ranges; /* instrumented, by kind */
  unsigned asm_statements;        /* inline asm with memory operands */
  unsigned combined;              /* accesses sharing another's update */
  unsigned in_registers;          /* updates moved out of loops */
  unsigned exit_updates;          /* their updates at the loops' exits */
};

#endif /* MEMPROF_PLUGIN_PLUGIN_H */
