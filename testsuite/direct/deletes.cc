// Direct allocation calls (testsuite/direct/run.py): operator delete,
// sized and unsized, of blocks from operator new at sites of distinct
// sizes; the blocks escape so that GCC keeps every pair.  Prints a
// checksum of what it wrote.
#include <cstdio>
#include <new>

struct pair_of_longs
{
  long a, b;
};

struct record
{
  long values[12];
};

static void *volatile sink;

int
main ()
{
  unsigned long checksum = 0;
  for (int i = 0; i < 20000; i++)
    {
      pair_of_longs *pair = new pair_of_longs{ i, 2L * i };
      record *big = new record ();
      big->values[i % 12] = i;
      void *raw = ::operator new (40);
      sink = pair;
      sink = big;
      sink = raw;
      checksum = checksum * 31 + pair->b + big->values[i % 12];
      delete pair;
      delete big;
      ::operator delete (raw);
    }
  std::printf ("%lu\n", checksum);
  return 5;
}
