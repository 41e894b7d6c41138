/* Fields of a local struct accessed through its address (ps = &s;
   ps->x) are on the stack: skipped at every level (-O0 follows the
   pointer, -O2 has rewritten the accesses to s.x).  */
/* { dg-do compile } */

struct point
{
  int x, y;
};

void consume (struct point *);

__attribute__ ((noipa)) int
local_struct (int v)
{
  struct point s;
  struct point *ps = &s;
  ps->x = v;
  ps->y = v + 1;
  consume (ps);
  return ps->x + ps->y;
}

/* { dg-final { scan-tree-dump-times "memprof: instrument " 0 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: skip store \[^\\n\]*\\(stack: " 2 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: skip load \[^\\n\]*\\(stack: " 2 "memprof" } } */
