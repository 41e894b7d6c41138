// A throwing operator new inside a try block keeps its landing pad when it
// is rewritten to the __hot_cold_t overload (-fchecking verifies the EH
// edges after every pass).
// { dg-do compile }
// { dg-options "-fplugin-arg-memprof-hot-cold-new -fplugin-arg-memprof-cold-lifetime=1" }
#include <new>

int *
make_or_null (int n)
{
  try
    {
      return new int[n];
    }
  catch (const std::bad_alloc &)
    {
      return nullptr;
    }
}

// { dg-final { scan-tree-dump "rewritten: _\[0-9\]+ = _Znam12__hot_cold_t \\(\[a-z._0-9\]+, 1\\);" "memprof" } }
