/* The callers of context_alloc.c's allocator (context_hints.py) as
   context_main.c has them, but each path calls make through a macro, as
   Lua calls its allocator through luaM_ macros: built from a .i file
   (-save-temps, gcc -E, distcc) the call sits at its column in the
   expanded text, built from the source at the macro's name.  The frames
   that tell cold from hot are those calls, in static functions.  */

#include "context_test.h"

#define MAKE(size) ((void *) make (size))

__attribute__ ((noinline)) static void *
make (size_t size)
{
  return allocate (size);
}

__attribute__ ((noinline)) static void
cold_path (void)
{
  for (int i = 0; i < BLOCKS; i++)
    cold_blocks[i] = MAKE (SIZE);
}

__attribute__ ((noinline)) static unsigned long
hot_path (void)
{
  unsigned long sum = 0;
  for (int i = 0; i < BLOCKS; i++)
    {
      hot_blocks[i] = MAKE (SIZE);
      sum += use_hot (i);
    }
  return sum;
}

int
main (void)
{
  cold_path ();
  unsigned long sum = hot_path ();
  return finish (sum);
}
