/* fork: the child keeps profiling and writes its own profile, named with
   its own pid, holding only what it did; a second child execs a program
   that is not instrumented, which writes nothing.  The parent prints both
   pids.  Sites: parent_work before (3) and after (7), child_work (5).  */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__ ((noipa)) static void
parent_work (int count)
{
  for (int i = 0; i < count; i++)
    {
      char *volatile block = malloc (48);
      block[0] = 1;
      free (block);
    }
}

__attribute__ ((noipa)) static void
child_work (int count)
{
  for (int i = 0; i < count; i++)
    {
      char *volatile block = malloc (96);
      block[0] = 1;
      free (block);
    }
}

int
main (void)
{
  int status;
  parent_work (3);
  fflush (stdout);
  pid_t child = fork ();
  if (child == 0)
    {
      child_work (5);
      exit (0);
    }
  waitpid (child, &status, 0);
  pid_t execed = fork ();
  if (execed == 0)
    {
      execl ("/bin/true", "true", (char *) NULL);
      _exit (127);
    }
  waitpid (execed, &status, 0);
  parent_work (7);
  printf ("parent %d child %d\n", (int) getpid (), (int) child);
  return 0;
}
