/* Linked into one of context_hints.py's hinted builds: closes stderr at
   exit before libmemprof_hint's statistics are printed (as gnulib's
   close_stdout does in GNU programs: the program's atexit handlers,
   registered after the library's constructor, run first).  */

#include <stdlib.h>
#include <unistd.h>

static void
close_stderr (void)
{
  close (STDERR_FILENO);
}

__attribute__ ((constructor)) static void
register_close (void)
{
  atexit (close_stderr);
}
