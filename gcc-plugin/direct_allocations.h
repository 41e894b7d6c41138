/* Direct allocation calls (direct_allocations.cc).  */

#ifndef MEMPROF_PLUGIN_DIRECT_ALLOCATIONS_H
#define MEMPROF_PLUGIN_DIRECT_ALLOCATIONS_H

/* The option's help text, for plugin_info.help.  */
extern const char direct_allocations_help[];
/* KEY (with VALUE) is direct-allocations: parsed (*OK false on a bad
   value), true; false for any other key.  */
bool direct_allocations_argument (const char *key, const char *value, bool *ok);
/* The pass, when the option asks for it.  */
void direct_allocations_register (const char *plugin_name);

#endif /* MEMPROF_PLUGIN_DIRECT_ALLOCATIONS_H */
