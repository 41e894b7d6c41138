#include <stdlib.h>

void lib_touch (volatile char *p, int n);

int
main (void)
{
  char *p = malloc (400);
  for (int i = 0; i < 400; i++)
    p[i] = 1;
  lib_touch (p, 400);
  free (p);
  return 0;
}
