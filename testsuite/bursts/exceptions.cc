// C++ with exceptions: the copies of a function keep its landing pads
// (EH edges are copied); the output must be the same in every build.
#include <vector>
#include <string>
#include <stdexcept>
#include <cstdio>
#include <map>
struct S { std::vector<int> v; std::string s; S(int n): v(n, 1), s(n, 'x') {} };
long work (int n) {
  std::map<int, S> m;
  long t = 0;
  for (int i = 0; i < n; i++) {
    try {
      m.emplace (i, S (i % 50));
      if (i % 97 == 0) throw std::runtime_error ("x");
      for (auto &x : m.at (i).v) t += x;
    } catch (const std::exception &e) { t += 1000; }
  }
  return t + m.size ();
}
int main () { printf ("%ld\n", work (20000)); }
