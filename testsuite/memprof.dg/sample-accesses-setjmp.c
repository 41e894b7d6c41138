/* A function that calls setjmp has abnormal edges: it is left whole with
   sample-accesses, and counted at every access with weight 1 (exact);
   the other functions are copied.  */
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

/* { dg-final { scan-tree-dump "sample-accesses: guarded left whole, counted at every access: abnormal edges" "memprof" } } */
/* { dg-final { scan-tree-dump "sample-accesses: plain copied" "memprof" } } */
/* { dg-final { scan-tree-dump "totals for guarded: 1 instrumented" "memprof" } } */
/* { dg-final { scan-tree-dump-times " \\+ 100;" 1 "memprof" } } */
