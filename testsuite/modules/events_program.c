/* A program whose events are known by hand (testsuite/modules/run.py):
   one allocation of 40 bytes and its free; fill: 10 stores to the heap
   in one loop of 10 iterations; sum: 10 loads in one loop of 10
   iterations; the functions main, fill and sum entered and left once
   each.  Stack and register accesses have no events.  Output goes
   through write(2), so that stdio allocates nothing.  With a second
   argument "segv", the program faults itself (after its output).  */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__ ((noinline)) void
fill (int *a, int n)
{
  for (int i = 0; i < n; i++)
    a[i] = i; /* FILL_STORE */
}

__attribute__ ((noinline)) int
sum (const int *a, int n)
{
  int s = 0;
  for (int i = 0; i < n; i++)
    s += a[i]; /* SUM_LOAD */
  return s;
}

int
main (int argc, char **argv)
{
  int n = argc > 1 ? atoi (argv[1]) : 10;
  int *a = malloc (n * sizeof *a);
  char text[32];
  fill (a, n);
  int s = sum (a, n);
  free (a);
  int length = 0;
  for (int v = s; length == 0 || v > 0; v /= 10)
    length++;
  for (int i = length - 1, v = s; i >= 0; i--, v /= 10)
    text[i] = '0' + v % 10;
  text[length] = '\n';
  write (1, text, length + 1);
  if (argc > 2 && strcmp (argv[2], "segv") == 0)
    *(volatile int *) (uintptr_t) (argc - 3) = 1;
  return s == n * (n - 1) / 2 ? 3 : 1;
}
