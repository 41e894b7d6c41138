/* Registering the plugin's passes: one helper, so that each pass's file
   holds only its own logic (the kernel's gcc-generate-*-pass.h do the
   same for its plugins).  */

#ifndef MEMPROF_PLUGIN_PASS_H
#define MEMPROF_PLUGIN_PASS_H

/* Insert PASS at POSITION (after or before) the INSTANCE-th pass named
   REFERENCE.  GCC places a pass only next to one of its own type (GIMPLE,
   simple IPA, IPA).  */
static inline void
register_pass_next_to (const char *plugin_name, opt_pass *pass,
                       const char *reference, int instance,
                       enum pass_positioning_ops position)
{
  struct register_pass_info info;
  info.pass = pass;
  info.reference_pass_name = reference;
  info.ref_pass_instance_number = instance;
  info.pos_op = position;
  register_callback (plugin_name, PLUGIN_PASS_MANAGER_SETUP, NULL, &info);
}

/* Insert PASS after the INSTANCE-th pass named REFERENCE.  */
static inline void
register_pass_after (const char *plugin_name, opt_pass *pass,
                     const char *reference, int instance)
{
  register_pass_next_to (plugin_name, pass, reference, instance,
                         PASS_POS_INSERT_AFTER);
}

/* Insert PASS before the INSTANCE-th pass named REFERENCE.  */
static inline void
register_pass_before (const char *plugin_name, opt_pass *pass,
                      const char *reference, int instance)
{
  register_pass_next_to (plugin_name, pass, reference, instance,
                         PASS_POS_INSERT_BEFORE);
}

#endif /* MEMPROF_PLUGIN_PASS_H */
