// A parameter of a class with a non-trivial copy constructor is passed by
// invisible reference (a DECL_BY_REFERENCE PARM_DECL): the object is the
// caller's, possibly on the heap, so accesses to it are instrumented.
// { dg-do compile }

struct Counted
{
  int n;
  Counted (int x) : n (x)
  {
  }
  Counted (const Counted &o) : n (o.n + 1)
  {
  }
};

__attribute__ ((noipa)) int
by_value (Counted c)
{
  c.n += 2;
  return c.n;
}

// { dg-final { scan-tree-dump-times "memprof: instrument store c_\[0-9\]+\\(D\\)->n " 1 "memprof" } }
// { dg-final { scan-tree-dump "memprof: instrument load c_\[0-9\]+\\(D\\)->n " "memprof" } }
// { dg-final { scan-tree-dump-times "memprof: skip " 0 "memprof" } }
