/* The instrumentation pass (instrument.cc).  */

#ifndef MEMPROF_PLUGIN_INSTRUMENT_H
#define MEMPROF_PLUGIN_INSTRUMENT_H

/* The GIMPLE pass that runs feedback's rewriting and then instruments
   each function.  */
opt_pass *make_instrument_pass (gcc::context *context);

/* PLUGIN_FINISH_UNIT: the stats line (-fplugin-arg-memprof-stats).  */
void print_unit_stats (void *gcc_data, void *user_data);
/* PLUGIN_ALL_IPA_PASSES_END: find the functions that run only in IFUNC
   resolvers, which are left uninstrumented.  */
void find_resolver_only_functions (void *gcc_data, void *user_data);
/* WPA (-flto): the same functions, marked for the ltrans units, which
   may each see only part of their callers.  */
opt_pass *make_resolver_only_pass (gcc::context *context);

#endif /* MEMPROF_PLUGIN_INSTRUMENT_H */
