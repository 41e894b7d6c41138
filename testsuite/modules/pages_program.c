/* The dependences module with partitioned workers
   (testsuite/modules/run.py): accesses over many 4 KiB granules, some
   across a granule's boundary, whose dependences are known by hand:
   - carried: a[i] = a[i - 1] + 1 over N ints (N / 1024 granules): N - 1
     loop-carried dependences on CARRIED_LINE;
   - unaligned: 8-byte stores at byte 7 * i of a buffer, each loaded back
     in the next iteration (UNALIGNED_LOAD reads what UNALIGNED_STORE
     wrote one iteration before, across granules now and then).
   Any worker count must give the same file as one worker.  */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define N 20000

__attribute__ ((noinline)) void
carried (int *a, int n)
{
  for (int i = 1; i < n; i++)
    a[i] = a[i - 1] + 1; /* CARRIED_LINE */
}

__attribute__ ((noinline)) uint64_t
unaligned (unsigned char *p, int n)
{
  uint64_t s = 0;
  for (int i = 1; i < n; i++)
    {
      uint64_t v;
      memcpy (&v, p + 7 * (i - 1), 8); /* UNALIGNED_LOAD */
      s += v;
      v = i;
      memcpy (p + 7 * i, &v, 8); /* UNALIGNED_STORE */
    }
  return s;
}

int
main (void)
{
  int *a = calloc (N, sizeof *a);
  unsigned char *p = calloc (7 * N + 8, 1);
  carried (a, N);
  uint64_t s = unaligned (p, N);
  int ok = a[N - 1] == N - 1 && s == (uint64_t) (N - 2) * (N - 1) / 2;
  free (a);
  free (p);
  return ok ? 0 : 1;
}
