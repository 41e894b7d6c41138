/* A second unit for default_options.c (also compiled as C++).  */
#include <stdlib.h>

void other_unit (void);

void
other_unit (void)
{
  char *volatile block = (char *) malloc (64);
  block[0] = 1;
  free (block);
}
