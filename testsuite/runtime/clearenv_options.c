/* A program that empties its environment (clearenv) in a constructor that
   runs before the runtime starts (with libmemprof.a, at the runtime's own
   constructor, after this one): environ is then null, but the C library
   has set it, so MEMPROF_OPTIONS is unset for the runtime as for the
   program.  The copy the kernel left on the initial stack is not read:
   the defaults apply and nothing says the runtime started before the C
   library set environ.  */
#include <stdio.h>
#include <stdlib.h>

#include "../compat/touch.h"

extern char **environ;

__attribute__ ((constructor (101))) static void
empty_environment (void)
{
  clearenv ();
}

__attribute__ ((noinline)) static char *
make_block (void)
{
  return malloc (40);
}

int
main (void)
{
  char *block = make_block ();
  touch (block, 2);
  printf ("environ after clearenv: %s\n", environ == NULL ? "null" : "set");
  free (block);
  return 4;
}
