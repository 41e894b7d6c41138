/* The kernels of bench/counter_cost.py: loops over a heap array whose
   accesses are all instrumented, one kind of counter update each.
     load       sum += a[i]: one update per load, nothing to combine
     rmw        a[i] += i: a load and a store of one address, one update
                adding 2 when combined
     invariant  a[i] += 1 and st->odd++ or st->even++ per element: the
                counters' addresses never change in the loop (GCC cannot
                keep them in registers itself: the stores to a[] may alias
                them), counted in a register when combined
   Usage: counter_loop KERNEL ROUNDS.  Prints a checksum so that no
   kernel is optimised away.  */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ELEMENTS (1 << 14) /* 128 KiB: in L2, the counters too */

struct parity
{
  long odd, even;
};

__attribute__ ((noipa)) static long
load_kernel (const long *a, long n)
{
  long sum = 0;
  for (long i = 0; i < n; i++)
    sum += a[i];
  return sum;
}

__attribute__ ((noipa)) static long
rmw_kernel (long *a, long n)
{
  for (long i = 0; i < n; i++)
    a[i] += i;
  return a[n - 1];
}

__attribute__ ((noipa)) static long
invariant_kernel (struct parity *st, long *a, long n)
{
  for (long i = 0; i < n; i++)
    {
      long value = a[i];
      a[i] = value + 1;
      if (value & 1)
        st->odd++;
      else
        st->even++;
    }
  return st->odd - st->even;
}

int
main (int argc, char **argv)
{
  if (argc != 3)
    {
      fprintf (stderr, "usage: counter_loop load|rmw|invariant ROUNDS\n");
      return 2;
    }
  long rounds = atol (argv[2]);
  long *a = malloc (ELEMENTS * sizeof *a);
  struct parity *st = calloc (1, sizeof *st);
  if (a == NULL || st == NULL)
    return 1;
  for (long i = 0; i < ELEMENTS; i++)
    a[i] = i * 7;
  long check = 0;
  for (long r = 0; r < rounds; r++)
    if (strcmp (argv[1], "load") == 0)
      check += load_kernel (a, ELEMENTS);
    else if (strcmp (argv[1], "rmw") == 0)
      check += rmw_kernel (a, ELEMENTS);
    else if (strcmp (argv[1], "invariant") == 0)
      check += invariant_kernel (st, a, ELEMENTS);
    else
      {
        fprintf (stderr, "counter_loop: unknown kernel %s\n", argv[1]);
        return 2;
      }
  printf ("%ld\n", check);
  free (st);
  free (a);
  return 0;
}
