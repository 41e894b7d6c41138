/* memprof.so: the GCC MemProf plugin for GCC 12.

   Instruments every load and store of GIMPLE with an inline update of a
   shadow counter (include/memprof/abi.h: one 8-byte counter per 64-byte
   granule, as LLVM MemProf), so that the libmemprof runtime can fold the
   accesses of every heap block into its allocation context.  Accesses
   that provably touch only the current thread's stack are not
   instrumented (they can never hit the heap); the proof is the
   base-object analysis of stack_analysis.cc.

   The pass runs after every GIMPLE optimisation (after "asan0"), at every
   -O level, so it never blocks vectorisation or any other optimisation.

   Options, -fplugin-arg-memprof-KEY[=VALUE]:
     callbacks             call runtime hooks instead of inline updates
     reads=0|1             instrument loads (default 1)
     writes=0|1            instrument stores (default 1)
     globals=0|1           instrument accesses to global variables (default 1)
     histogram             per-8-byte saturating counters (runtime histogram=1)
     stack-analysis=none|basic|full
                           none: instrument every access; basic: skip an
                           access whose base is directly a local variable or
                           an alloca; full (default): also through pointer
                           chains, conversions, pointer arithmetic, PHIs and
                           points-to sets holding only automatic variables;
                           across calls, pointer parameters that every caller
                           passes a stack address (stack_params.cc)
     other-frames=0|1      trust other frames' automatic variables to be
                           stack: parameters from callers' frames, points-to
                           sets of other functions' locals (default 1; 0
                           for code that runs on stacks it allocated)
     dump[=details]        write <source>.NNNt.memprof: every access,
                           instrumented or skipped with its reason, and totals
     stats                 one line per translation unit on stderr
     instrument=0|1        instrument accesses (default 1; 0 with use=)
     combine=none|block|loop
                           block: one update adding N for the N accesses of
                           a block that provably hit one counter; loop
                           (default): also count an access whose address a
                           loop without calls never changes in a register,
                           added to its counter at the loop's exits
                           (combine.cc)
     use=FILE ...          profile feedback: see feedback.cc
     default-options=OPTIONS
                           runtime options compiled into the program:
                           see default_options.cc
     events=LIST|@FILE     events for a profiling module: see events.cc
     sample-accesses[=RATE], access-burst=N
                           count accesses in bursts of a counting copy of
                           each function, one check in RATE: see bursts.cc
     direct-allocations    the always-on mode's check at each allocation
                           call, glibc called directly: see
                           direct_allocations.cc
     stack-checks=0|1      skip at run time the updates through a pointer
                           parameter that points into the thread's stack
                           (default 1): see stack_checks.cc

   With -flto the pass runs at link time: give -fplugin=memprof.so (and the
   same -fplugin-arg-memprof-... options) to the link command too.

   The files:
     memprof.cc          this entry: the options and plugin_init
     instrument.cc       the instrumentation pass, its dump and stats
     combine.cc          one counter update for accesses to one counter
     sibcalls.cc         no sibling call where an allocation loses a frame
     accesses.cc         finding the memory references of a function
     stack_analysis.cc   the proof that an access is on the stack
     stack_params.cc     its step across calls: proven pointer parameters
     stack_checks.cc     what it cannot prove, tested at run time
     emit.cc             the runtime's declarations, counter updates, hooks
                         and the start-up constructor
     feedback.cc         profile feedback (-fplugin-arg-memprof-use)
     clone.cc            feedback's cloning of allocation wrappers
     lto_partition.cc    its wrappers kept with their callers in WPA
     globals.cc          feedback's hot and cold global variables
     default_options.cc  runtime options compiled into the program
     events.cc           events for profiling modules (memprof/module.h)
     bursts.cc           sampled access counting: plain and counting copies
     direct_allocations.cc  allocation calls that call glibc directly
     pass.h, plugin.h    pass registration; what the files share  */

#include "gcc-plugin.h"
#include "plugin-version.h"

#include "tree.h"
#include "tree-pass.h"
#include "context.h"
#include "diagnostic-core.h"
#include "dumpfile.h"

#include "plugin.h"
#include "pass.h"
#include "emit.h"
#include "instrument.h"
#include "stack_params.h"
#include "feedback.h"
#include "default_options.h"
#include "events.h"
#include "bursts.h"
#include "direct_allocations.h"
#include "stack_checks.h"
#include "library_calls.h"

int plugin_is_GPL_compatible;

#define PLUGIN_VERSION "0.1.0"

static const char plugin_help[]
    = "Instruments loads and stores for the GCC MemProf heap profiler; link "
      "with `pkg-config --libs memprof`.\n"
      "  -fplugin-arg-memprof-callbacks           call runtime hooks instead "
      "of inline counter updates\n"
      "  -fplugin-arg-memprof-reads=0|1           instrument loads (default "
      "1)\n"
      "  -fplugin-arg-memprof-writes=0|1          instrument stores (default "
      "1)\n"
      "  -fplugin-arg-memprof-globals=0|1         instrument accesses to "
      "global variables (default 1)\n"
      "  -fplugin-arg-memprof-histogram           per-8-byte histogram "
      "counters (run with MEMPROF_OPTIONS=histogram=1)\n"
      "  -fplugin-arg-memprof-stack-analysis=none|basic|full\n"
      "                                           which provably-stack "
      "accesses are skipped (default full)\n"
      "  -fplugin-arg-memprof-other-frames=0|1    trust callers' and other "
      "functions' frames to be stack (default 1; 0 for fibers on heap "
      "stacks)\n"
      "  -fplugin-arg-memprof-dump[=details]      dump file "
      "<source>.NNNt.memprof listing every access\n"
      "  -fplugin-arg-memprof-stats               one summary line per "
      "translation unit on stderr\n"
      "  -fplugin-arg-memprof-instrument=0|1      instrument accesses "
      "(default 1, 0 with use=)\n"
      "  -fplugin-arg-memprof-combine=none|block|loop\n"
      "                                           fewer counter updates, "
      "same counts (default loop)\n"
      "  -fplugin-arg-memprof-events=LIST|@FILE   events for a profiling "
      "module: load, store, memory, function, loop (docs/modules.md)\n"
      "With -flto, pass the plugin and its arguments to the link command too.";

/* ---- Options ---- */

struct plugin_options plugin_options
    = { false, true,  true,         true, false, STACK_ANALYSIS_FULL,
        true,  false, COMBINE_LOOP, -1 };

/* ---- Arguments ---- */

static const char valid_arguments[]
    = "callbacks, reads=0|1, writes=0|1, globals=0|1, histogram, "
      "stack-analysis=none|basic|full, other-frames=0|1, dump[=details], "
      "stats, combine=none|block|loop, default-options=OPTIONS, "
      "events=LIST|@FILE, sample-accesses[=RATE], access-burst=N, "
      "direct-allocations, stack-checks=0|1, ";

/* See plugin.h.  */
bool
parse_flag (const char *key, const char *value, bool *result)
{
  if (value == NULL || strcmp (value, "1") == 0)
    *result = true;
  else if (strcmp (value, "0") == 0)
    *result = false;
  else
    {
      error ("memprof: bad value %qs in %<-fplugin-arg-memprof-%s=%s%>: "
             "expected 0 or 1",
             value, key, value);
      return false;
    }
  return true;
}

static bool
parse_arguments (struct plugin_name_args *info, const char **dump_switch)
{
  bool ok = true;
  for (int i = 0; i < info->argc; i++)
    {
      const char *key = info->argv[i].key;
      const char *value = info->argv[i].value;
      if (strcmp (key, "callbacks") == 0)
        ok &= parse_flag (key, value, &plugin_options.callbacks);
      else if (strcmp (key, "reads") == 0)
        ok &= parse_flag (key, value, &plugin_options.reads);
      else if (strcmp (key, "writes") == 0)
        ok &= parse_flag (key, value, &plugin_options.writes);
      else if (strcmp (key, "globals") == 0)
        ok &= parse_flag (key, value, &plugin_options.globals);
      else if (strcmp (key, "histogram") == 0)
        ok &= parse_flag (key, value, &plugin_options.histogram);
      else if (strcmp (key, "other-frames") == 0)
        ok &= parse_flag (key, value, &plugin_options.other_frames);
      else if (strcmp (key, "stats") == 0)
        ok &= parse_flag (key, value, &plugin_options.stats);
      else if (strcmp (key, "combine") == 0)
        {
          if (value && strcmp (value, "none") == 0)
            plugin_options.combine = COMBINE_NONE;
          else if (value && strcmp (value, "block") == 0)
            plugin_options.combine = COMBINE_BLOCK;
          else if (value && strcmp (value, "loop") == 0)
            plugin_options.combine = COMBINE_LOOP;
          else
            {
              error ("memprof: bad value %qs in "
                     "%<-fplugin-arg-memprof-combine%>: expected none, block "
                     "or loop",
                     value ? value : "");
              ok = false;
            }
        }
      else if (strcmp (key, "instrument") == 0)
        {
          bool instrument;
          ok &= parse_flag (key, value, &instrument);
          plugin_options.instrument = instrument;
        }
      else if (feedback_argument (key, value, &ok))
        ;
      else if (default_options_argument (info->base_name, key, value, &ok))
        ;
      else if (events_argument (key, value, &ok))
        ;
      else if (bursts_argument (key, value, &ok))
        ;
      else if (direct_allocations_argument (key, value, &ok))
        ;
      else if (stack_checks_argument (key, value, &ok))
        ;
      else if (strcmp (key, "stack-analysis") == 0)
        {
          if (value && strcmp (value, "none") == 0)
            plugin_options.stack_analysis = STACK_ANALYSIS_NONE;
          else if (value && strcmp (value, "basic") == 0)
            plugin_options.stack_analysis = STACK_ANALYSIS_BASIC;
          else if (value && strcmp (value, "full") == 0)
            plugin_options.stack_analysis = STACK_ANALYSIS_FULL;
          else
            {
              error ("memprof: bad value %qs in "
                     "%<-fplugin-arg-memprof-stack-analysis%>: expected "
                     "none, basic or full",
                     value ? value : "");
              ok = false;
            }
        }
      else if (strcmp (key, "dump") == 0)
        {
          if (value == NULL)
            *dump_switch = "tree-memprof";
          else if (strcmp (value, "details") == 0)
            *dump_switch = "tree-memprof-details";
          else
            {
              error ("memprof: bad value %qs in %<-fplugin-arg-memprof-dump%>: "
                     "expected no value or %<details%>",
                     value);
              ok = false;
            }
        }
      else
        {
          error ("memprof: unknown option %<-fplugin-arg-memprof-%s%>; the "
                 "options are: %s%s",
                 key, valid_arguments, feedback_argument_names);
          ok = false;
        }
    }
  return ok;
}

int
plugin_init (struct plugin_name_args *info, struct plugin_gcc_version *version)
{
  static struct plugin_info plugin_info = { PLUGIN_VERSION, NULL };
  const char *dump_switch = NULL;

  if (!plugin_default_version_check (version, &gcc_version))
    {
      error ("memprof: this plugin was built for GCC %s (%s) but is loaded "
             "by GCC %s (%s); rebuild it with this compiler",
             gcc_version.basever, gcc_version.datestamp, version->basever,
             version->datestamp);
      return 1;
    }
  if (!parse_arguments (info, &dump_switch) || !bursts_check_options ())
    return 1;
  /* Profile feedback alone does not instrument, as -fprofile-use does
     not; -fplugin-arg-memprof-instrument asks for both.  */
  if (plugin_options.instrument < 0)
    plugin_options.instrument = !feedback_enabled ();
  if (feedback_enabled () && !feedback_start (info->base_name))
    return 1;
  /* The runtime walks frame pointers through instrumented code
     (runtime/stack.c) and unwinds with DWARF only where the chain leaves
     it: keep them, as an explicit -fno-omit-frame-pointer would (marked
     as given, so that the target's defaults do not turn it back on).  */
  if (plugin_options.instrument)
    {
      global_options.x_flag_omit_frame_pointer = 0;
      global_options_set.x_flag_omit_frame_pointer = 1;
    }
  plugin_info.help
      = concat (plugin_help, "\n", feedback_help, default_options_help,
                bursts_help, direct_allocations_help, stack_checks_help, NULL);

  register_callback (info->base_name, PLUGIN_INFO, NULL, &plugin_info);
  register_callback (info->base_name, PLUGIN_REGISTER_GGC_ROOTS, NULL,
                     (void *) emit_roots);
  register_callback (info->base_name, PLUGIN_REGISTER_GGC_ROOTS, NULL,
                     (void *) bursts_roots);
  register_callback (info->base_name, PLUGIN_REGISTER_GGC_ROOTS, NULL,
                     (void *) stack_checks_roots);
  register_callback (info->base_name, PLUGIN_REGISTER_GGC_ROOTS, NULL,
                     (void *) library_calls_roots);

  /* After "asan0", at every level: after all GIMPLE optimisations, so the
     counter updates never stop one (measured: a vectorisable loop runs
     7x slower when instrumented at asan's earlier position).  */
  register_pass_after (info->base_name, make_instrument_pass (g), "asan0", 1);
  /* Direct allocation calls: after it (direct_allocations.cc).  */
  direct_allocations_register (info->base_name);
  /* Events for a profiling module: just before, so that the counting
     pass finds the same accesses (events.cc).  */
  if (events_enabled ())
    {
      register_callback (info->base_name, PLUGIN_REGISTER_GGC_ROOTS, NULL,
                         (void *) events_roots);
      register_pass_before (info->base_name, make_events_pass (g), "memprof",
                            1);
    }
  /* The proofs across calls: a late IPA pass, once the call graph is
     final and before any body is expanded: after IPA points-to, just
     before "simdclone", the last late IPA pass (the name "pta" is also
     OpenACC's earlier instance).  */
  register_pass_before (info->base_name, make_stack_params_pass (g),
                        "simdclone", 1);
  /* GCC parses -fdump-tree-* before plugins load; the dump of a plugin
     pass is switched on here instead.  */
  if (dump_switch != NULL)
    {
      g->get_dumps ()->dump_switch_p (dump_switch);
      g->get_dumps ()->dump_switch_p ("ipa-memprof-stack-params");
      if (feedback_enabled ())
        g->get_dumps ()->dump_switch_p ("ipa-memprof-clone");
      if (events_enabled ())
        g->get_dumps ()->dump_switch_p ("tree-memprof_events");
    }

  register_callback (info->base_name, PLUGIN_ALL_IPA_PASSES_START,
                     add_module_constructor, NULL);
  register_callback (info->base_name, PLUGIN_ALL_IPA_PASSES_END,
                     add_ltrans_module_constructor, NULL);
  register_callback (info->base_name, PLUGIN_ALL_IPA_PASSES_END,
                     add_ltrans_module_constructor, NULL);
  register_callback (info->base_name, PLUGIN_ALL_PASSES_END,
                     restore_addressable, NULL);
  register_callback (info->base_name, PLUGIN_FINISH_UNIT, print_unit_stats,
                     NULL);
  register_callback (info->base_name, PLUGIN_ALL_IPA_PASSES_END,
                     find_resolver_only_functions, NULL);
  /* Under -flto, in WPA, before the partitioning: the last regular IPA
     pass is "comdats".  */
  register_pass_before (info->base_name, make_resolver_only_pass (g), "comdats",
                        1);
  return 0;
}
