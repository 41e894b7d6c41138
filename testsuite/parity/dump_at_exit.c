/* dump_at_exit=0: the program dumps when it chooses (here once, after 3
   allocations, with LLVM's name for memprof_dump); nothing is written
   at exit.  */
#include <stdio.h>
#include <stdlib.h>

#include <memprof/interface.h>

#include "churn.h"

int
main (void)
{
  churn (3);
  printf ("dump %d\n", __memprof_profile_dump ());
  churn (2);
  return 0;
}
