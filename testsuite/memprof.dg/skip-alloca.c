/* A store straight through the result of alloca is skipped as "stack:
   alloca" (pointer_proof at depth 0 on the alloca call), at every
   level.  */
/* { dg-do compile } */

#include <alloca.h>

void consume (int *);

__attribute__ ((noipa)) void
alloca_buffer (int n)
{
  int *b = alloca (n * sizeof (int));
  *b = n;
  consume (b);
}

/* { dg-final { scan-tree-dump-times "memprof: instrument " 0 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: skip store \\*b_\[0-9\]+ \\(stack: alloca\\)" 1 "memprof" } } */
