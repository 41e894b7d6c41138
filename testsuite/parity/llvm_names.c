/* Code written for clang's runtime, with its header
   (sanitizer/memprof_interface.h): dump after 3 allocations, reset, 2
   more, exit.  Run with profile_file=DIR/n.%n: n.0 holds 3 allocations
   of churn, n.1 only the 2 made after the reset.  */
#include <stdio.h>
#include <stdlib.h>

#include <sanitizer/memprof_interface.h>

#include "churn.h"

int
main (void)
{
  int status;
  churn (3);
  status = __memprof_profile_dump ();
  __memprof_profile_reset ();
  churn (2);
  printf ("llvm names: dump %d\n", status);
  return 0;
}
