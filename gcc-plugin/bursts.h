/* Sampled access counting: bursty tracing (bursts.cc).  */

#ifndef MEMPROF_PLUGIN_BURSTS_H
#define MEMPROF_PLUGIN_BURSTS_H

/* The options' help lines, for memprof.cc.  */
extern const char bursts_help[];

/* The trees bursts.cc keeps across functions.  */
extern const struct ggc_root_tab bursts_roots[];

/* -fplugin-arg-memprof-sample-accesses[=RATE] and access-burst=N: true
   when KEY is one of them (*OK false on a bad value).  */
bool bursts_argument (const char *key, const char *value, bool *ok);

/* After the arguments: false (with an error) for a combination that
   cannot sample accesses.  */
bool bursts_check_options (void);

/* Is -fplugin-arg-memprof-sample-accesses given?  */
bool access_sampling_enabled (void);

/* What each counted access adds: the sampling rate (1 without it).  */
unsigned access_weight (void);

/* Make the current function a plain copy and a counting copy of its
   body, switched by the runtime's per-thread countdown at the function's
   entry and at the back edges of its loops; the counting copy's
   statements are marked (in_counting_copy) until the pass ends.  False
   when the function is left as it was (the dump says why): its updates
   are then guarded (guard_updates).  */
bool make_burst_copies (void);

/* In a copied function, load the shadow's base (the SSA name BASE,
   loaded at the entry) in each block that uses it instead: the plain
   copy then keeps no register for it.  */
void load_shadow_base_where_used (tree base);

/* In a function without copies, a tick on the back edge of each loop
   that calls a function: the countdown goes on, so that the library
   calls the runtime counts (interceptors.c) are sampled in time as the
   counting copies are, and the periods keep their length.  */
void add_ticks (void);

/* Whether the current function's updates run in bursts only (a function
   left whole under sampling), and its query for emit.cc.  */
void guard_updates (bool guarded);
bool updates_guarded (void);

/* Insert SEQ (a counter update) before STMT, in a block of its own that
   runs when the thread's countdown is in a burst; the updates of a
   stretch of a block without calls share one such block, before the
   stretch's last access (inserted when guard_updates (false) is
   called).  */
void insert_in_bursts_only (gimple *stmt, gimple_seq seq);

/* Insert SEQ before STMT in a block of its own, *UPDATE, that STMT's
   former block (returned) falls into and *REST, from STMT on, follows;
   the caller ends the returned block with the condition and adds the
   edge that goes around *UPDATE to *REST.  */
basic_block insert_in_block_of_its_own (gimple *stmt, gimple_seq seq,
                                        basic_block *update, basic_block *rest);

/* The runtime's initial-exec TLS variable NAME (an unsigned long),
   defined weak in an executable for a local-exec access.  */
tree executable_thread_variable (const char *name);

/* Is STMT in the counting copy?  Valid after make_burst_copies returned
   true, in the same pass.  */
bool in_counting_copy (gimple *stmt);

#endif /* MEMPROF_PLUGIN_BURSTS_H */
