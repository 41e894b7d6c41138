/* The shadow base is set before any constructor of the program runs, and
   allocations made in constructors are recorded.  */
/* expect: make_early:2:10 early_constructor:3:17 count=1 accesses=2 size=64 */
#include <stdio.h>
#include <stdlib.h>

#include "../compat/touch.h"

static char *early_block;
static int shadow_ready_in_constructor;

__attribute__ ((noinline)) static char *
make_early (void)
{
  return malloc (64);
}

__attribute__ ((constructor)) static void
early_constructor (void)
{
  shadow_ready_in_constructor = __memprof_shadow_base != 0;
  char *block = make_early ();
  touch (block, 2);
  early_block = block;
}

int
main (void)
{
  printf ("shadow ready in constructor: %d\n", shadow_ready_in_constructor);
  free (early_block);
  return shadow_ready_in_constructor ? 0 : 1;
}
