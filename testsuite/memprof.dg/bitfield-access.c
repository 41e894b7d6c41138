/* A bit-field store and a bit-field load through a pointer are one
   instrumented access each (GIMPLE keeps p->b as a COMPONENT_REF; the
   counter is bumped at the bytes of the field's representative), and
   neither is dropped as "not addressable".  */
/* { dg-do compile } */

struct flags
{
  unsigned a : 3;
  unsigned b : 5;
  int c;
};

__attribute__ ((noipa)) void
set_b (struct flags *p, unsigned v)
{
  p->b = v;
}

__attribute__ ((noipa)) unsigned
get_b (struct flags *p)
{
  return p->b;
}

/* { dg-final { scan-tree-dump-times "memprof: instrument store p_\[0-9\]+\\(D\\)->b " 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: instrument load p_\[0-9\]+\\(D\\)->b " 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: skip " 0 "memprof" } } */
