/* dump_signal: the program signals itself after three allocations at one
   site and waits for the dump to appear; two more follow before exit.
   Run with profile_file=DIR/sig.%n: sig.0 holds 3 allocations, sig.1 5.  */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__ ((noipa)) static void
churn (int count)
{
  for (int i = 0; i < count; i++)
    {
      char *volatile block = malloc (64);
      block[0] = 1;
      free (block);
    }
}

int
main (int argc, char **argv)
{
  int waited = 0;
  churn (3);
  raise (SIGUSR2);
  while (access (argv[1], F_OK) != 0 && waited++ < 500)
    usleep (10000);
  churn (2);
  printf ("dump seen: %d\n", access (argv[1], F_OK) == 0);
  return argc == 2 ? 0 : 1;
}
