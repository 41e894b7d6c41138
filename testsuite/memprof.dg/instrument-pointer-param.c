/* A pointer parameter is instrumented even when the only caller passes
   the address of its own local: the callee cannot know (its incoming
   value is a default definition, never a stack proof), and the caller's
   local is not this frame's storage.  */
/* { dg-do compile } */

__attribute__ ((noipa)) void
set_through (int *p, int v)
{
  *p = v + 1;
}

__attribute__ ((noipa)) int
owner (int v)
{
  int mine;
  set_through (&mine, v);
  return mine;
}

/* { dg-final { scan-tree-dump-times "memprof: instrument store \\*p_\[0-9\]+\\(D\\) " 1 "memprof" } } */
/* { dg-final { scan-tree-dump "totals for set_through: 1 instrumented" "memprof" } } */
/* { dg-final { scan-tree-dump "totals for owner: 0 instrumented" "memprof" } } */
