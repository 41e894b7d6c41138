/* -fplugin-arg-memprof-callbacks: accesses are still reported as
   "instrument", but the code calls __memprof_load/__memprof_store
   instead of updating the shadow inline (so __memprof_shadow_base is
   never read).  The last two patterns match the function body the dump
   prints after the pass.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-dump -fplugin-arg-memprof-callbacks" } */

__attribute__ ((noipa)) int
exchange (int *p, int v)
{
  int old = *p;
  *p = v;
  return old;
}

/* { dg-final { scan-tree-dump-times "memprof: instrument load \\*p_\[0-9\]+\\(D\\) " 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: instrument store \\*p_\[0-9\]+\\(D\\) " 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "__memprof_load \\(" 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "__memprof_store \\(" 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "= __memprof_shadow_base;" 0 "memprof" } } */
