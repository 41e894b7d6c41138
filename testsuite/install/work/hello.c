#include <stdio.h>
#include <stdlib.h>
#include <memprof/interface.h>
int main (void) { char *p = malloc (10); p[0] = 'x'; printf ("%c\n", p[0]); free (p);
  char depth[8]; memprof_get_option ("max_stack_depth", depth, sizeof depth);
  return depth[0] == '3' ? 0 : 1; }
