/* A pointer loaded from a local array of pointers to locals: no def
   chain leads to an address (it is a load), but at -O2 GCC's points-to
   set of p is {a, b, c, d}, all frame storage and not escaped, so the
   store is skipped as "stack: points-to set".  At -O0 there are no
   points-to sets: the store is instrumented.  */
/* { dg-do compile } */

__attribute__ ((noipa)) int
pick (int k)
{
  int a[4] = { 0 }, b[4] = { 0 }, c[4] = { 0 }, d[4] = { 0 };
  int *ptrs[4] = { a, b, c, d };
  int *p = ptrs[k & 3];
  p[1] = 7;
  return a[1] + b[1] + c[1] + d[1];
}

/* { dg-final { scan-tree-dump-times "memprof: skip store \[^\\n\]*\\(stack: points-to set\\)" 1 "memprof" { -O2 } } } */
/* { dg-final { scan-tree-dump-times "memprof: instrument " 0 "memprof" { -O2 } } } */
/* { dg-final { scan-tree-dump-times "memprof: instrument store " 1 "memprof" { -O0 } } } */
/* { dg-final { scan-tree-dump-times "memprof: skip \[^\\n\]*\\(stack: points-to set\\)" 0 "memprof" { -O0 } } } */
