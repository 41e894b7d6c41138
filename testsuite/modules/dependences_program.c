/* Dependences known by hand (testsuite/modules/run.py, the dependences
   module), with N = 100:
   - carried: a[i] = a[i - 1] + 1 for i in 1..N-1: each iteration from the
     second loads what the previous one stored: N - 2 loop-carried
     dependences, store line CARRIED_LINE -> load on the same line;
   - same_iteration: the store to a[i] then the load of b[i], where b is
     a: N intra-iteration dependences, none carried;
   - independent: b[i] = a[i] + 1 on two blocks filled before the loop:
     no dependence of that loop.
   Built at -O1 without vectorization (so that every access stays one
   load or store).  */

#include <stdlib.h>
#include <unistd.h>

#define N 100

__attribute__ ((noinline)) void
carried (int *a, int n)
{
  for (int i = 1; i < n; i++)
    a[i] = a[i - 1] + 1; /* CARRIED_LINE */
}

__attribute__ ((noinline)) int
same_iteration (int *a, int *b, int n)
{
  int s = 0;
  for (int i = 0; i < n; i++)
    {
      a[i] = i;  /* SAME_STORE */
      s += b[i]; /* SAME_LOAD */
    }
  return s;
}

__attribute__ ((noinline)) void
independent (const int *a, int *b, int n)
{
  for (int i = 0; i < n; i++)
    b[i] = a[i] + 1; /* INDEPENDENT_LINE */
}

int
main (void)
{
  int *a = calloc (N, sizeof *a);
  int *b = calloc (N, sizeof *b);
  carried (a, N);
  int s = same_iteration (a, a, N);
  independent (a, b, N);
  free (a);
  free (b);
  return s == N * (N - 1) / 2 ? 0 : 1;
}
