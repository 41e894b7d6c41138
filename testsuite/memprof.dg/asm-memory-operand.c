/* An inline asm with a memory operand is left alone (its size and meaning
   are the asm's secret) and only counted in the totals.  */
/* { dg-do compile } */

__attribute__ ((noipa)) void
touch (int *p)
{
  __asm__ volatile("" : "+m"(*p));
}

/* { dg-final { scan-tree-dump-times "memprof: instrument " 0 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: skip " 0 "memprof" } } */
/* { dg-final { scan-tree-dump "totals for touch: 0 instrumented \[^\\n\]*, 1 asm with memory operands" "memprof" } } */
