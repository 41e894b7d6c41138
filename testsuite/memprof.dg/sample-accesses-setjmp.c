/* A function that calls setjmp has abnormal edges: it is left whole with
   sample-accesses, each of its updates behind a test of the countdown
   (in bursts only) and adding the rate; the other functions are copied.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-dump -fplugin-arg-memprof-sample-accesses -fplugin-arg-memprof-combine=none" } */

#include <setjmp.h>

static jmp_buf env;

long
guarded (long *a, long n)
{
  if (setjmp (env))
    return -1;
  long s = 0;
  for (long i = 0; i < n; i++)
    s += a[i];
  return s;
}

long
plain (long *a)
{
  return a[1];
}

/* { dg-final { scan-tree-dump "sample-accesses: guarded left whole, counted in bursts only: abnormal edges" "memprof" } } */
/* { dg-final { scan-tree-dump "sample-accesses: plain copied" "memprof" } } */
/* { dg-final { scan-tree-dump "totals for guarded: 1 instrumented" "memprof" } } */
/* { dg-final { scan-tree-dump-times " \\+ 100;" 2 "memprof" } } */
/* One test of the countdown, in guarded (the copied plain has its own
   checks: 3 loads of the countdown there, before the switch).  */
/* { dg-final { scan-tree-dump-times "_\[0-9\]+ = __memprof_access_countdown;" 2 "memprof" } } */
