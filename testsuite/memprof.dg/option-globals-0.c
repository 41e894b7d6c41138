/* -fplugin-arg-memprof-globals=0: an access to a global variable is
   skipped as "globals disabled" while an access through a pointer is
   still instrumented.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-dump -fplugin-arg-memprof-globals=0" } */

int counter;

__attribute__ ((noipa)) void
record (int *p, int v)
{
  counter = v;
  *p = v;
}

/* { dg-final { scan-tree-dump-times "memprof: skip store counter \\(globals disabled\\)" 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: instrument store \\*p_\[0-9\]+\\(D\\) " 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: instrument store counter" 0 "memprof" } } */
