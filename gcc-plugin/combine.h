/* Combining counter updates (combine.cc).  */

#ifndef MEMPROF_PLUGIN_COMBINE_H
#define MEMPROF_PLUGIN_COMBINE_H

/* For each of ACCESSES (with their VERDICTS), in *COUNTS: how many
   accesses its counter update adds (1 alone, N when it stands for N
   accesses that provably hit the same counter), or 0 when it is not
   counted (skipped, or counted by another's update).  Returns the number
   of updates saved.  */
unsigned combine_counter_updates (vec<memory_access> *accesses,
                                  const vec<enum verdict> *verdicts,
                                  vec<unsigned> *counts);

/* Before the accesses are collected: loops with preheaders, when
   accesses may be counted in registers over loops.  */
void prepare_loop_counting (void);

/* Where an access of ACCESSES with a nonzero count in *COUNTS has an
   address that a loop without calls never changes: count it in a
   register over the loop, added to its counter at the loop's exits
   (BASE: the shadow base), and set its count to 0.  Returns the number
   of updates so moved out of the loops' bodies; *EXIT_UPDATES, the updates at the exits.  */
unsigned count_in_loop_registers (vec<memory_access> *accesses,
                                  vec<unsigned> *counts, tree base,
                                  unsigned *exit_updates);

/* Has LOOP no call, no inline asm, no statement that may throw
   (-fnon-call-exceptions) and no irreducible region?  (Nothing in it can
   free a block, dump the profile, read the thread's countdown or leave
   the loop by no edge; bursts.cc asks too.)  */
bool loop_is_straight (class loop *loop);

/* After the function is instrumented: the loops as the pass found them.  */
void finish_loop_counting (void);

#endif /* MEMPROF_PLUGIN_COMBINE_H */
