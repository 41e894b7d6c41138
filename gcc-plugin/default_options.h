/* -fplugin-arg-memprof-default-options=OPTIONS: runtime options compiled
   into the program (default_options.cc).  */

#ifndef MEMPROF_PLUGIN_DEFAULT_OPTIONS_H
#define MEMPROF_PLUGIN_DEFAULT_OPTIONS_H

/* Handle -fplugin-arg-memprof-KEY=VALUE when KEY is default-options:
   return true (registering, for plugin PLUGIN_NAME, the callback that
   emits the string), and set *OK to false after an error when VALUE is
   missing.  */
bool default_options_argument (const char *plugin_name, const char *key,
                               const char *value, bool *ok);

/* Its help line.  */
extern const char default_options_help[];

#endif /* MEMPROF_PLUGIN_DEFAULT_OPTIONS_H */
