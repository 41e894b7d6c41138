/* combine=none: one update per access, even for a load and a store of
   one address (combine.cc is off).  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-dump -fplugin-arg-memprof-combine=none" } */

void
bump (long *counter, const long *a, long n)
{
  for (long i = 0; i < n; i++)
    *counter += a[i];
}

/* { dg-final { scan-tree-dump-times "one update adds" 0 "memprof" } } */
/* { dg-final { scan-tree-dump-times "counted in a register" 0 "memprof" } } */
/* { dg-final { scan-tree-dump "totals for bump: (\[0-9\]+) instrumented \[^\n\]* \\1 counter updates \\(0 combined, 0 counted in registers over loops, 0 at loop exits\\)" "memprof" } } */
