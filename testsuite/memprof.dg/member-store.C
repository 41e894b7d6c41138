// Stores to members through this (this->x, and y, which is this->y) are
// instrumented: this is an incoming pointer that may point to the heap.
// { dg-do compile }

struct Point
{
  int x, y;
  void set (int v);
};

__attribute__ ((noipa)) void
Point::set (int v)
{
  this->x = v;
  y = v + 1;
}

// { dg-final { scan-tree-dump-times "memprof: instrument store this_\[0-9\]+\\(D\\)->x " 1 "memprof" } }
// { dg-final { scan-tree-dump-times "memprof: instrument store this_\[0-9\]+\\(D\\)->y " 1 "memprof" } }
// { dg-final { scan-tree-dump-times "memprof: skip " 0 "memprof" } }
