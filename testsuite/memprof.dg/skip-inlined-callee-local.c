/* At -O2 the static inline callee is inlined into caller and its local
   array becomes a local of caller: the accesses in caller are skipped.
   At -O0 nothing is inlined, and the callee's own accesses are skipped.  */
/* { dg-do compile } */

void consume (int *);

static inline int
callee (int i)
{
  int t[8];
  for (int k = 0; k < 8; k++)
    t[k] = k * i;
  consume (t);
  return t[i & 7];
}

__attribute__ ((noipa)) int
caller (int i)
{
  return callee (i) + 1;
}

/* { dg-final { scan-tree-dump-times "memprof: instrument " 0 "memprof" } } */
/* { dg-final { scan-tree-dump "memprof: skip load t\\\[\[^\\n\]*\\(stack: local variable\\)" "memprof" } } */
/* { dg-final { scan-tree-dump "totals for caller: 0 instrumented \[^\\n\]* \[1-9\]\[0-9\]* skipped as stack" "memprof" { -O2 } } } */
/* { dg-final { scan-tree-dump-times "totals for callee:" 0 "memprof" { -O2 } } } */
