/* An update is never combined across a call: the call may not return.
   Here it exits, so the second store to the same address never runs and
   the block, live at exit, has exactly 2 accesses (a store and the load
   of the argument, which share one update).  Combined across the call
   it would have 3.  */
/* { dg-do run } */
/* { dg-memprof-options "print_text=1:write_profile=0" } */

#include <stdlib.h>

struct cell
{
  volatile long value;
};

__attribute__ ((noipa)) void
maybe_exit (long code)
{
  if (code == 1)
    exit (0);
}

int
main (void)
{
  struct cell *c = malloc (sizeof *c);
  c->value = 1;
  maybe_exit (c->value);
  c->value = 2;
  free (c);
  return 1;
}

/* { dg-output "size \\(ave/min/max\\) 8.00 / 8 / 8\[^\n\]*\n\[^\n\]*access_count \\(ave/min/max\\): 2.00 / 2 / 2\n" } */
/* { dg-final { scan-tree-dump-times "one update adds 3" 0 "memprof" } } */
