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

#endif /* MEMPROF_PLUGIN_COMBINE_H */
