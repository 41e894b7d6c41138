/* Strided accesses of a loop are counted in a register of runs and given
   to their granules at the loop's exits (combine.cc, "strided"); the
   totals stay exact, and the rule must not take an access that does not
   run once in every iteration.  Counted by hand (the lengths come through
   noipa calls, so that -O2 neither vectorizes nor unrolls):
   - bytes (300): 300 stores (fill), 300 loads (sum_bytes), 0 for the
     call with n = 0 (the exit adds nothing anywhere): 600;
   - shorts (100 x 2 bytes): 100 stores (fill_shorts), then slide twice,
     a load and a store per element, backwards: 500;
   - ints (64 x 4 bytes): 64 stores, then find: a load every fourth int
     up to index 40 (11), and up to the end for a value never there
     (16), the loop left before the access in its last iteration: 91
     (not strided: the loop stops at what it reads, and would mostly
     pay a call for a few iterations);
   - flags (32 bytes) and b (32 longs): bump_odd loads every flag (32,
     strided) and loads and stores b[i] for the 16 odd ones only (32:
     not strided, its block does not run every iteration).  */
/* { dg-do run } */
/* { dg-memprof-options "print_text=1:write_profile=0" } */

#include <stdlib.h>

__attribute__ ((noipa)) void
fill (unsigned char *p, long n)
{
  for (long i = 0; i < n; i++)
    p[i] = (unsigned char) i;
}

__attribute__ ((noipa)) long
sum_bytes (const unsigned char *p, long n)
{
  long s = 0;
  for (long i = 0; i < n; i++)
    s += p[i];
  return s;
}

__attribute__ ((noipa)) void
fill_shorts (unsigned short *p, long n)
{
  for (long i = 0; i < n; i++)
    p[i] = (unsigned short) (i * 3);
}

__attribute__ ((noipa)) void
slide (unsigned short *p, unsigned n)
{
  unsigned short *q = p + n;
  do
    {
      unsigned m = *--q;
      *q = (unsigned short) (m >= 5 ? m - 5 : 0);
    }
  while (--n);
}

__attribute__ ((noipa)) void
fill_ints (int *a, long n)
{
  for (long i = 0; i < n; i++)
    a[i] = (int) i;
}

__attribute__ ((noipa)) long
find (const int *a, long n, int v)
{
  for (long i = 0;; i += 4)
    {
      if (i >= n)
        return -1;
      if (a[i] == v)
        return i;
    }
}

__attribute__ ((noipa)) void
bump_odd (const unsigned char *flags, long *b, long n)
{
  for (long i = 0; i < n; i++)
    if (flags[i] & 1)
      b[i]++;
}

__attribute__ ((noipa)) long
sum_quads (const int *a, long n)
{
  long s = 0;
  for (long i = 0; i < n; i += 4)
    {
      s = s * 31 + a[i];
      s ^= a[i + 1];
      s -= a[i + 2];
      s += (long) a[i + 3] << 1;
    }
  return s;
}

__attribute__ ((noipa)) long
sum_sparse (const int *a, long n)
{
  long s = 0;
  for (long i = 0; i < n; i += 4)
    {
      s = s * 31 + a[i];
      s ^= a[i + 1];
    }
  return s;
}

int
main (void)
{
  unsigned char *bytes = malloc (300);
  unsigned short *shorts = malloc (100 * sizeof *shorts);
  int *ints = malloc (64 * sizeof *ints);
  unsigned char *flags = calloc (32, 1);
  long *b = calloc (32, sizeof *b);
  int *quads = malloc (32 * sizeof *quads);
  fill (bytes, 300);
  if (sum_bytes (bytes, 300) != 300 * 299 / 2 - 256 * 44
      || sum_bytes (bytes, 0))
    return 1;
  fill_shorts (shorts, 100);
  slide (shorts, 100);
  slide (shorts, 100);
  fill_ints (ints, 64);
  if (find (ints, 64, 40) != 40 || find (ints, 64, 1000) != -1)
    return 1;
  fill (flags, 32);
  bump_odd (flags, b, 32);
  if (b[1] != 1 || b[2] != 0)
    return 1;
  fill_ints (quads, 32);
  if (sum_quads (quads, 32) == 0 || sum_sparse (quads, 32) == 0)
    return 1;
  free (quads);
  free (bytes);
  free (shorts);
  free (ints);
  free (flags);
  free (b);
  return 0;
}

/* { dg-output "(?=.*size \\(ave/min/max\\) 300.00 / 300 / 300\[^\n\]*\n\[^\n\]*access_count \\(ave/min/max\\): 600.00 / 600 / 600\n)(?=.*size \\(ave/min/max\\) 200.00 / 200 / 200\[^\n\]*\n\[^\n\]*access_count \\(ave/min/max\\): 500.00 / 500 / 500\n)(?=.*size \\(ave/min/max\\) 256.00 / 256 / 256\[^\n\]*\n\[^\n\]*access_count \\(ave/min/max\\): 91.00 / 91 / 91\n)(?=.*size \\(ave/min/max\\) 32.00 / 32 / 32\[^\n\]*\n\[^\n\]*access_count \\(ave/min/max\\): 64.00 / 64 / 64\n)(?=.*size \\(ave/min/max\\) 256.00 / 256 / 256\[^\n\]*\n\[^\n\]*access_count \\(ave/min/max\\): 34.00 / 34 / 34\n)(?=.*size \\(ave/min/max\\) 128.00 / 128 / 128\[^\n\]*\n\[^\n\]*access_count \\(ave/min/max\\): 80.00 / 80 / 80\n)" } */
/* { dg-final { scan-tree-dump "strided over loop \[0-9\]+ \\(step 1\\), counted at its 1 exits: MEM\\\[\\(const unsigned char \\*\\)" "memprof" { -O2 } } } */
/* { dg-final { scan-tree-dump "strided over loop \[0-9\]+ \\(step -2\\)" "memprof" { -O2 } } } */
/* { dg-final { scan-tree-dump-times "strided over loop \[0-9\]+ \\(step 16\\), counted at its 2 exits" 0 "memprof" { -O2 } } } */
/* { dg-final { scan-tree-dump-times "strided over loop \[0-9\]+ \\(step \[-0-9\]+\\), counted at its \[0-9\]+ exits: MEM\\\[\\(long int \\*\\)" 0 "memprof" { -O2 } } } */
/* { dg-final { scan-tree-dump-times "strided over loop \[0-9\]+ \\(step 16\\), counted at its 1 exits by another's call" 3 "memprof" { -O2 } } } */
