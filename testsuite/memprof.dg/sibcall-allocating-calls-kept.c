/* After "tailc", the pass takes the tail-call mark off the calls that may
   allocate (a pointer result: malloc, a wrapper of it) and leaves it on
   the others: at -O2 the two allocating calls are kept as calls (and the
   module constructor's call of __memprof_init, whose return address
   names the module), and consume () is still a tail call.  */
/* { dg-do compile } */

#include <stdlib.h>

extern void *xmalloc (size_t);
extern void consume (int);

char *
make_name (size_t n)
{
  return xmalloc (n);
}

void *
plain (size_t n)
{
  return malloc (n);
}

void
pass_on (int x)
{
  consume (x + 1);
}

/* { dg-final { scan-tree-dump-times "1 tail call\\(s\\) that may allocate kept as calls" 3 "memprof" { -O2 } } } */
/* { dg-final { scan-tree-dump "consume \\(_\[0-9\]+\\); \\\[tail call\\\]" "memprof" { -O2 } } } */
/* { dg-final { scan-tree-dump-times "(xmalloc|malloc) \[^\n\]*\\\[tail call\\\]" 0 "memprof" { -O2 } } } */
