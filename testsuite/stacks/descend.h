/* The recursion that programs allocating deep in a call stack share
   (testsuite/stacks/reentry.c, bench/stack_depth.c).  DESCEND_THEN
   (BOTTOM) defines descend (DEPTH): DEPTH calls of itself, then BOTTOM ()
   once at the bottom.  Each level does something after its call returns,
   so no call is a tail call and every level keeps its frame.  A macro,
   not a function taking BOTTOM: the call at the bottom stays direct and
   descend keeps its name (no constant-propagated clone).  */
#ifndef MEMPROF_TEST_DESCEND_H
#define MEMPROF_TEST_DESCEND_H

#define DESCEND_THEN(bottom)                                                   \
  __attribute__ ((noinline)) static int descend (int depth)                    \
  {                                                                            \
    if (depth == 0)                                                            \
      {                                                                        \
        bottom ();                                                             \
        return 0;                                                              \
      }                                                                        \
    int below = descend (depth - 1);                                           \
    __asm__ volatile("" : : : "memory");                                       \
    return below + 1;                                                          \
  }

#endif /* MEMPROF_TEST_DESCEND_H */
