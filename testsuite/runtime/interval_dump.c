/* dump_interval_s=1: a program that works for about 2.5 seconds gets
   dumps while it runs, each a complete profile.  */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int
main (void)
{
  for (int round = 0; round < 25; round++)
    {
      char *volatile block = malloc (128);
      block[0] = (char) round;
      free (block);
      usleep (100000);
    }
  printf ("interval done\n");
  return 0;
}
