// With hot-cold-new, operator new and new[] at hot and cold sites call
// tcmalloc's __hot_cold_t overloads (plain, nothrow, aligned) with the
// hint as the last argument.
// { dg-do compile }
// { dg-options "-fplugin-arg-memprof-hot-cold-new -fplugin-arg-memprof-cold-lifetime=1" }
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

// { dg-final { scan-tree-dump "rewritten: _\[0-9\]+ = _Znwm12__hot_cold_t \\(4, 1\\);" "memprof" } }
// { dg-final { scan-tree-dump "rewritten: _\[0-9\]+ = _Znam12__hot_cold_t \\(\[a-z._0-9\]+, 254\\);" "memprof" } }
// { dg-final { scan-tree-dump "rewritten: _\[0-9\]+ = _ZnwmRKSt9nothrow_t12__hot_cold_t \\(4, &nothrow, 1\\);" "memprof" } }
// { dg-final { scan-tree-dump "rewritten: _\[0-9\]+ = _ZnwmSt11align_val_t12__hot_cold_t \\(64, 64, 254\\);" "memprof" } }
// { dg-final { scan-tree-dump-times "rewritten:" 4 "memprof" } }
