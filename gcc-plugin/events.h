/* Events for profiling modules (events.cc).  */

#ifndef MEMPROF_PLUGIN_EVENTS_H
#define MEMPROF_PLUGIN_EVENTS_H

/* The trees events.cc keeps across functions, for
   PLUGIN_REGISTER_GGC_ROOTS.  */
extern const struct ggc_root_tab events_roots[];

/* -fplugin-arg-memprof-events=LIST: true when KEY is "events" (*OK false
   on a bad value, with the error given).  */
bool events_argument (const char *key, const char *value, bool *ok);

/* Were any events asked for?  */
bool events_enabled (void);

/* The GIMPLE pass that adds the events' calls, before "memprof".  */
opt_pass *make_events_pass (gcc::context *context);

#endif /* MEMPROF_PLUGIN_EVENTS_H */
