/* A small program for option and output tests: three allocations at one
   site, one live at exit; prints a line and exits with status 5.  */
#include <stdio.h>
#include <stdlib.h>

#include "../compat/touch.h"

int
main (void)
{
  for (int i = 0; i < 3; i++)
    {
      char *block = malloc (128);
      touch (block, 10);
      free (block);
    }
  char *kept = malloc (1000);
  touch (kept, 1);
  printf ("plain done\n");
  return 5;
}
