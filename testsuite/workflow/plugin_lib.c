/* An instrumented library a host dlopens.  */
#include <stdlib.h>
#include <string.h>

__attribute__ ((noipa)) char *
plugin_make (int n)
{
  char *p = malloc (n);
  memset (p, 7, n);
  return p;
}

int
plugin_run (void)
{
  char *p = plugin_make (100);
  int sum = 0;
  for (int i = 0; i < 100; i++)
    sum += p[i];
  free (p);
  return sum;
}
