/* 400 bytes, each read and written 3 times: 2,400 accesses, 48 per
   8 bytes.  */
#include <stdio.h>
#include <stdlib.h>

__attribute__ ((noipa)) void
touch (volatile char *p, int n)
{
  for (int k = 0; k < 3; k++)
    for (int i = 0; i < n; i++)
      p[i]++;
}

int
main (void)
{
  char *p = malloc (400);
  touch (p, 400);
  free (p);
  puts ("touch done");
  return 3;
}
