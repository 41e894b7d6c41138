/* The proof that an access is on the current thread's stack
   (stack_analysis.cc).  */

#ifndef MEMPROF_PLUGIN_STACK_ANALYSIS_H
#define MEMPROF_PLUGIN_STACK_ANALYSIS_H

/* Is the memory that REF (a reference, or ADDRESS when REF is NULL: the
   pointer of a range or atomic access) designates provably on this
   thread's stack, by the rules of LEVEL?  INSTRUMENT when not proven,
   else the rule that proved it.  *FRAME_UIDS caches the frame's points-to
   uids across the calls for one function: NULL at first, freed with
   BITMAP_FREE by the caller.  */
enum verdict stack_verdict (tree ref, tree address, enum stack_analysis level,
                            bitmap *frame_uids);

/* Add to UIDS the DECL_PT_UIDs of the current function's frame storage
   (cfun): its automatic variables, its parameters and its result slot --
   not a result returned in memory nor a parameter passed by invisible
   reference, whose storage is the caller's (possibly heap).  */
void add_frame_storage_uids (bitmap uids);

/* Does VALUE, an argument of a call in the current function, provably
   point into a stack frame, by the rules of stack-analysis=full?  For the
   proofs across calls (stack_params.cc).  */
bool argument_is_stack (tree value);

#endif /* MEMPROF_PLUGIN_STACK_ANALYSIS_H */
