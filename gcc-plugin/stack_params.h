/* The stack analysis across calls (stack_params.cc): pointer parameters
   proven to receive only addresses in their callers' frames, and the
   automatic variables of the unit.  */

#ifndef MEMPROF_PLUGIN_STACK_PARAMS_H
#define MEMPROF_PLUGIN_STACK_PARAMS_H

/* The late simple IPA pass that proves them.  */
opt_pass *make_stack_params_pass (gcc::context *context);

/* Does the parameter PARM receive, at every call, only an address in its
   callers' frames?  False for anything but a proven PARM_DECL, and for
   everything before the pass ran or when it did not.  */
bool parameter_is_callers_frame (tree parm);

/* Does the function FNDECL return, from every call, only a stack address
   (or a null pointer)?  */
bool function_returns_stack (tree fndecl);

/* The DECL_PT_UIDs of the automatic storage of every function of the
   unit (as the pass found them), or NULL when the pass did not run.  */
bitmap unit_automatic_variables (void);

#endif /* MEMPROF_PLUGIN_STACK_PARAMS_H */
