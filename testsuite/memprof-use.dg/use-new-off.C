// Without hot-cold-new, operator new is left alone at hot and cold sites
// (the hinted overloads need tcmalloc or libmemprof_hint).
// { dg-do compile }
// { dg-options "-fplugin-arg-memprof-cold-lifetime=1" }
#include <new>

struct alignas (64) line
{
  char bytes[64];
};

void *sink[4];

void
allocate_all (int n)
{
  sink[0] = new int (n);
  sink[1] = new int[n];
  sink[2] = new (std::nothrow) int (n);
  sink[3] = new line;
}

// { dg-final { scan-tree-dump-times ": cold; left alone" 2 "memprof" } }
// { dg-final { scan-tree-dump-times ": hot; left alone" 2 "memprof" } }
// { dg-final { scan-tree-dump-times "rewritten:" 0 "memprof" } }
