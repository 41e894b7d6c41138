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

/* Is DECL storage of the current function's frame (cfun)?  An automatic
   variable, a parameter, or the result slot -- unless the result is
   returned in memory or the parameter passed by invisible reference:
   their storage is the caller's (possibly heap).  */
bool decl_is_frame_storage (tree decl);

/* Does VALUE, an argument of a call in the current function, provably
   point into a stack frame, by the rules of stack-analysis=full?  For the
   proofs across calls (stack_params.cc).  */
bool argument_is_stack (tree value);

#endif /* MEMPROF_PLUGIN_STACK_ANALYSIS_H */
