// A function returning a large struct by value writes its result through
// the invisible return slot, which is the caller's storage and may be on
// the heap (new Big (make_big (x)) constructs the result in place in the
// new block).  Those stores must be instrumented, not skipped as this
// frame's stack.
// { dg-do compile }

struct Big
{
  long v[16];
};

__attribute__ ((noipa)) Big
make_big (long x)
{
  Big b;
  for (int i = 0; i < 16; i++)
    b.v[i] = x + i;
  return b;
}

__attribute__ ((noipa)) Big *
heap_big (long x)
{
  return new Big (make_big (x));
}

// { dg-final { scan-tree-dump-times "memprof: skip \[^\\n\]*\\(stack: " 0 "memprof" } }
// { dg-final { scan-tree-dump "totals for make_big: \[1-9\]" "memprof" } }
