/* Constant loads and local objects known by hand (testsuite/modules/
   run.py, the lifetime module), with N = 50:
   - scale's load of *k sees 3 every time: one constant load, N times;
     the load of tmp[0] sees 0..N-1: not constant;
   - TMP_LINE: N objects, each freed in the iteration that allocated it:
     N iteration-local, N call-local;
   - KEEP_LINE: N objects freed by a later loop of the same call: 0
     iteration-local, N call-local;
   - MAKE_LINE: one object that make_object returns: neither.  */

#include <stdlib.h>

#define N 50

__attribute__ ((noinline)) int
scale (const int *k, int x)
{
  return *k * x;
}

__attribute__ ((noinline)) int *
make_object (void)
{
  return malloc (sizeof (int)); /* MAKE_LINE */
}

int
main (void)
{
  int *k = make_object ();
  int **keep = malloc (N * sizeof *keep);
  long s = 0;
  *k = 3;
  for (int i = 0; i < N; i++)
    {
      int *volatile tmp = malloc (16); /* TMP_LINE */
      tmp[0] = i;
      s += scale (k, tmp[0]);
      free (tmp);
    }
  for (int i = 0; i < N; i++)
    keep[i] = malloc (8); /* KEEP_LINE */
  for (int i = 0; i < N; i++)
    free (keep[i]);
  free (keep);
  free (k);
  return s == 3L * N * (N - 1) / 2 ? 0 : 1;
}
