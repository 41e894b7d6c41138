/* A function left whole with sample-accesses (it calls setjmp): the
   updates of a stretch of a block without calls share one test of the
   countdown, before the stretch's last access; a call ends a stretch (the
   callee may change the countdown or free the block).  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-dump -fplugin-arg-memprof-sample-accesses -fplugin-arg-memprof-combine=none" } */

#include <setjmp.h>

static jmp_buf env;
void note (long);

long
stretches (long *a, long *b)
{
  if (setjmp (env))
    return -1;
  long s = a[0] + b[8] + a[16];
  note (s);
  return s + b[24];
}

/* Three loads before the call (one stretch), one after it.  */
/* { dg-final { scan-tree-dump "sample-accesses: stretches left whole" "memprof" } } */
/* { dg-final { scan-tree-dump "totals for stretches: 4 instrumented" "memprof" } } */
/* { dg-final { scan-tree-dump "4 update\\(s\\) in bursts only, under 2 test\\(s\\) of the countdown" "memprof" } } */
/* { dg-final { scan-tree-dump-times "_\[0-9\]+ = __memprof_access_countdown;" 2 "memprof" } } */
/* { dg-final { scan-tree-dump-times " \\+ 100;" 4 "memprof" } } */
