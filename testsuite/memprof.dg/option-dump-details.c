/* -fplugin-arg-memprof-dump=details adds, after every access line, a
   ";;   in " line with the GIMPLE statement that makes the access.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-dump=details" } */

__attribute__ ((noipa)) void
store_value (int *p, int v)
{
  *p = v;
}

/* { dg-final { scan-tree-dump-times "memprof: instrument store \\*p_\[0-9\]+\\(D\\) " 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times ";;   in " 1 "memprof" } } */
/* { dg-final { scan-tree-dump "memprof: instrument store \[^\\n\]*\\n;;   in \\*p_\[0-9\]+\\(D\\) = v_\[0-9\]+\\(D\\);" "memprof" } } */
