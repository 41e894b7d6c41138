/* MEMPROF_OPTIONS applies when the runtime starts before the C library has
   set environ: here at an allocation made by the program's .preinit_array
   function (in a dynamically linked program, the C library's initialiser
   runs after it).  Built with -DHIDE_ENVIRONMENT, the function breaks the
   initial stack's layout (argv's terminating null) while it allocates, so
   that the runtime cannot find the environment there: it must say so and
   the program must run as before.  */
#include <stdio.h>
#include <stdlib.h>

#include "../compat/touch.h"

extern char **environ;

static char *preinit_block;
static int environ_unset_in_preinit;

__attribute__ ((noinline)) static char *
make_preinit (void)
{
  return malloc (48);
}

static void
allocate_in_preinit (int argc, char **argv, char **envp)
{
  (void) envp;
  environ_unset_in_preinit = environ == NULL;
#ifdef HIDE_ENVIRONMENT
  /* volatile: GCC knows that malloc reads no memory of the program.  */
  char *volatile *terminator = &argv[argc];
  *terminator = argv[0];
#endif
  preinit_block = make_preinit ();
#ifdef HIDE_ENVIRONMENT
  *terminator = NULL;
#else
  (void) argc;
  (void) argv;
#endif
  touch (preinit_block, 3);
}

__attribute__ ((section (".preinit_array"),
                used)) static void (*const preinit_entry) (int, char **,
                                                           char **)
    = allocate_in_preinit;

int
main (void)
{
  printf ("environ unset in preinit: %d\n", environ_unset_in_preinit);
  free (preinit_block);
  return 3;
}
