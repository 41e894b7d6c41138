/* A struct parameter passed by value lives in this frame (a PARM_DECL
   that is not DECL_BY_REFERENCE): accessing it is skipped, even after
   its address escapes.  */
/* { dg-do compile } */

struct point
{
  int x, y;
};

void consume (struct point *);

__attribute__ ((noipa)) int
param_struct (struct point s)
{
  s.x += 1;
  consume (&s);
  return s.x;
}

/* { dg-final { scan-tree-dump-times "memprof: instrument " 0 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: skip (load|store) s\\.x \\(stack: local variable\\)" 3 "memprof" } } */
