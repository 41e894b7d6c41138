// std::vector<int>::push_back and the library code it pulls in compile
// with the plugin (and with -fchecking's IL verification), and accesses
// through the vector's heap storage are instrumented.
// { dg-do compile }

#include <vector>

__attribute__ ((noipa)) int
fill (std::vector<int> &v, int n)
{
  for (int i = 0; i < n; i++)
    v.push_back (i);
  return v.back ();
}

// { dg-final { scan-tree-dump "memprof: instrument " "memprof" } }
