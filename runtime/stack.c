/* Call-stack capture, with libunwind (DWARF unwind tables) or by walking
   frame pointers (unwinder=fp).  The runtime's own frames are cut off by
   finding the return address of the interposed entry point (the first
   frame outside the runtime) in the unwound stack; no frame count is
   assumed, so inlining inside the runtime changes nothing.  */

#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <pthread.h>
#include <string.h>

#include "internal.h"

/* This thread's stack, found once per thread ({1, 1} when unknown).  */
static __thread uintptr_t stack_low,
    stack_high __attribute__ ((tls_model ("initial-exec")));

void
thread_stack_bounds (uintptr_t *low, uintptr_t *high)
{
  if (stack_high == 0)
    {
      pthread_attr_t attributes;
      void *base;
      size_t size;

      stack_low = stack_high = 1;
      /* For the main thread glibc reads /proc/self/maps, with malloc.  */
      in_runtime++;
      if (pthread_getattr_np (pthread_self (), &attributes) == 0)
        {
          if (pthread_attr_getstack (&attributes, &base, &size) == 0)
            {
              stack_low = (uintptr_t) base;
              stack_high = (uintptr_t) base + size;
            }
          pthread_attr_destroy (&attributes);
        }
      in_runtime--;
    }
  *low = stack_low;
  *high = stack_high;
}

/* Return addresses along the frame-pointer chain, innermost first.  Every
   frame read lies inside this thread's stack, above the previous one, so
   a program built without frame pointers gives a short or odd stack,
   never a fault.  */
static int
walk_frame_pointers (void **frames, int max)
{
  uintptr_t low, high;
  const uintptr_t *frame = __builtin_frame_address (0);
  int count = 0;

  thread_stack_bounds (&low, &high);
  while (count < max && (uintptr_t) frame >= low
         && (uintptr_t) frame + 2 * sizeof (uintptr_t) <= high
         && ((uintptr_t) frame & (sizeof (uintptr_t) - 1)) == 0)
    {
      const uintptr_t *next = (const uintptr_t *) frame[0];
      if (frame[1] == 0)
        break;
      frames[count++] = (void *) frame[1];
      if (next <= frame)
        break;
      frame = next;
    }
  return count;
}

int
stack_capture (uintptr_t *pcs, int max, uintptr_t caller_return)
{
  void *frames[STACK_CAPTURE_MAX];
  bool frame_pointers = runtime_options.unwinder[0] == 'f';
  int captured = frame_pointers
                     ? walk_frame_pointers (frames, STACK_CAPTURE_MAX)
                     : unw_backtrace (frames, STACK_CAPTURE_MAX);
  /* libunwind's frame 0 is this function's own pc.  */
  int first = frame_pointers ? 0 : 1;
  int count = 0;

  for (int i = 0; i < captured; i++)
    if ((uintptr_t) frames[i] == caller_return)
      {
        first = i;
        break;
      }
  /* Return addresses are stored minus 1 so that they fall inside the call
     instruction: symbolizers then give the call's line and inline chain.
     The whole stack is folded before it is cut to MAX frames.  */
  uintptr_t whole[STACK_CAPTURE_MAX];
  for (int i = first; i < captured; i++)
    {
      if (frames[i] == NULL)
        break;
      whole[count++] = (uintptr_t) frames[i] - 1;
    }
  if (runtime_options.fold_recursion)
    count = stack_fold_recursion (whole, count);
  if (count > max)
    count = max;
  memcpy (pcs, whole, count * sizeof *pcs);
  return count;
}
