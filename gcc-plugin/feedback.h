/* memprof-use: profile feedback in the memprof plugin (feedback.cc).
   The instrumentation (memprof.cc) calls these.  */

#ifndef MEMPROF_PLUGIN_FEEDBACK_H
#define MEMPROF_PLUGIN_FEEDBACK_H

/* Handle -fplugin-arg-memprof-KEY=VALUE when KEY is one of feedback's
   arguments: return true, and set *OK to false (after an error) when
   VALUE is bad.  */
bool feedback_argument (const char *key, const char *value, bool *ok);

/* VALUE of -fplugin-arg-memprof-KEY as a number of 0 or more into
   *RESULT; false after an error that says it expected EXPECTED.  */
bool feedback_parse_number (const char *key, const char *value,
                            const char *expected, double *result);

/* The feedback arguments' help lines and their names for messages.  */
extern const char feedback_help[];
extern const char feedback_argument_names[];

/* Was -fplugin-arg-memprof-use=FILE given?  */
bool feedback_enabled (void);

/* Load the profile and register feedback's callbacks.  False after an
   error.  */
bool feedback_start (const char *plugin_name);

/* Match and rewrite the allocation calls of the current function (cfun):
   called from the pass before any instrumentation.  */
void feedback_function (void);

/* Hot and cold global variables (globals.cc).  */
struct feedback;

/* Handle -fplugin-arg-memprof-global-hot-density=X and
   -fplugin-arg-memprof-global-cold-size=BYTES as feedback_argument does
   its own.  */
bool globals_argument (const char *key, const char *value, bool *ok);

/* Place the unit's variables in hot and cold sections by PROFILE's
   globals (it must outlive the unit), when the IPA passes start; with
   REMARKS, a note at each variable placed.  */
void globals_start (const char *plugin_name, const struct feedback *profile,
                    bool remarks);

/* The unit's variables placed so far in hot and in cold sections.  */
void globals_counts (unsigned *hot, unsigned *cold);

#endif /* MEMPROF_PLUGIN_FEEDBACK_H */
