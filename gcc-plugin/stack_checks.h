/* Run-time stack checks of pointer parameters (stack_checks.cc).  */

#ifndef MEMPROF_PLUGIN_STACK_CHECKS_H
#define MEMPROF_PLUGIN_STACK_CHECKS_H

/* The option's help line, for memprof.cc.  */
extern const char stack_checks_help[];

/* The trees stack_checks.cc keeps across functions.  */
extern const struct ggc_root_tab stack_checks_roots[];

/* -fplugin-arg-memprof-stack-checks=0|1: true when KEY is it (*OK false
   after an error).  */
bool stack_checks_argument (const char *key, const char *value, bool *ok);

/* Before the current function's updates are inserted.  */
void stack_checks_begin (void);

/* When the access A is made through a pointer parameter of the current
   function that the stack analysis could not prove, insert its update
   SEQ (later, by stack_checks_end) in a block that runs only when the
   parameter does not point into the thread's stack, and return true;
   otherwise return false and leave SEQ to the caller.  */
bool insert_unless_on_stack (const memory_access *a, gimple_seq seq);

/* Insert the checks and the updates insert_unless_on_stack took; returns
   how many updates were taken.  */
unsigned stack_checks_end (void);

#endif /* MEMPROF_PLUGIN_STACK_CHECKS_H */
