/* Call-stack capture with libunwind.  The runtime's own frames are cut
   off by finding the return address of the interposed entry point (the
   first frame outside the runtime) in the unwound stack; no frame count
   is assumed, so inlining inside the runtime changes nothing.  */

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "internal.h"

int
stack_capture (uintptr_t *pcs, int max, uintptr_t caller_return)
{
  void *frames[STACK_CAPTURE_MAX];
  int captured = unw_backtrace (frames, STACK_CAPTURE_MAX);
  int first = 1; /* frame 0 is this function's own pc */
  int count = 0;

  for (int i = 0; i < captured; i++)
    if ((uintptr_t) frames[i] == caller_return)
      {
        first = i;
        break;
      }
  /* Return addresses are stored minus 1 so that they fall inside the call
     instruction: symbolizers then give the call's line and inline chain.  */
  for (int i = first; i < captured && count < max; i++)
    {
      if (frames[i] == NULL)
        break;
      pcs[count++] = (uintptr_t) frames[i] - 1;
    }
  return count;
}
