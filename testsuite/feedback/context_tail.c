/* Another caller of context_alloc.c's allocator (context_hints.py), whose
   contexts part at a function that ends in a tail call of a function
   returning nothing: fill_cold and fill_hot end with `store (...)`, a
   jump at -O2 unless -fno-optimize-sibling-calls makes it a call.  The
   profile is taken with -fno-optimize-sibling-calls, the hinted build is
   made without it: the profile's contexts have the frames of fill_cold
   and fill_hot, which the hinted build must keep (Lua's luaH_finishset
   ends so, with `luaH_newkey (...)`).  */

#include "context_test.h"

__attribute__ ((noinline)) static void
store (void **slot)
{
  *slot = allocate (SIZE);
}

__attribute__ ((noinline)) static void
fill_cold (int i)
{
  store (&cold_blocks[i]);
}

__attribute__ ((noinline)) static void
fill_hot (int i)
{
  store (&hot_blocks[i]);
}

int
main (void)
{
  unsigned long sum = 0;

  for (int i = 0; i < BLOCKS; i++)
    fill_cold (i);
  for (int i = 0; i < BLOCKS; i++)
    {
      fill_hot (i);
      sum += use_hot (i);
    }
  return finish (sum);
}
