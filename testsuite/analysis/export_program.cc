/* The C++ program test_export.py profiles, built with g++ -g -O2 and the
   plugin: allocation sites whose frames are inline chains (a template's
   always_inline member inlined into its caller, std::vector's growth
   inlined into main), names with templates, commas and spaces, blocks
   freed and blocks kept to the end (live at exit), and accesses.  The
   argument (default 1) multiplies the counts.  */

#include <cstdlib>
#include <vector>

namespace shapes
{
template <typename T, int N> struct pool
{
  static inline __attribute__ ((always_inline)) T *
  grab (std::size_t n)
  {
    return new T[n * N];
  }
};
} // namespace shapes

volatile double sink;

__attribute__ ((noinline)) static double *
make_doubles (std::size_t n)
{
  return shapes::pool<double, 2>::grab (n);
}

__attribute__ ((noinline)) static char *
make_text (std::size_t n)
{
  return static_cast<char *> (std::malloc (n));
}

int
main (int argc, char **argv)
{
  int rounds = argc > 1 ? std::atoi (argv[1]) : 1;
  std::vector<double *> kept;
  for (int i = 0; i < rounds * 10; i++)
    {
      double *d = make_doubles (64);
      for (std::size_t j = 0; j < 128; j++)
        d[j] = (double) j;
      sink = sink + d[50];
      if (i % 2)
        delete[] d;
      else
        kept.push_back (d);
    }
  for (int i = 0; i < rounds * 3; i++)
    {
      char *text = make_text (1000);
      text[0] = 1;
      sink = sink + text[0];
      std::free (text);
    }
  for (double *d : kept)
    delete[] d;
  kept.clear ();
  kept.push_back (make_doubles (8)); /* live at exit */
  sink = sink + (double) kept.size ();
  return 0;
}
