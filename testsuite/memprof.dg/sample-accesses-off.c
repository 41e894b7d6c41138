/* Without -fplugin-arg-memprof-sample-accesses nothing of it is in the
   code: no copy, no check, no countdown; every access adds 1.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-dump -fplugin-arg-memprof-combine=none" } */

long
sum (const long *a, long n)
{
  long s = 0;
  for (long i = 0; i < n; i++)
    s += a[i];
  return s;
}

/* { dg-final { scan-tree-dump-times "__memprof_access" 0 "memprof" } } */
/* { dg-final { scan-tree-dump-times "sample-accesses:" 0 "memprof" } } */
/* { dg-final { scan-tree-dump "totals for sum: 1 instrumented \\(1 loads, \[^\n\]* 1 counter updates" "memprof" } } */
