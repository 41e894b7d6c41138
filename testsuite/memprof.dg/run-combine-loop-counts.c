/* Accesses whose address a loop never changes are counted in a register
   and added to their counter at the loop's exits (combine.cc); the
   totals stay exact.  Counted by hand (volatile where an optimiser would
   change the number of accesses):
   - fill and scan: 100 stores and 100 loads of the array's block; 10
     hits and 90 misses, each a load and a store of the stats block: 200;
   - maybe_bump: the flag is never set, so the loop never touches *P, a
     pointer that is not even canonical: the exit adds 0, and must not
     read a counter for that address;
   - count_to_five: 5 times a load and a store, and a load for the test,
     then exit (0) from inside the loop, through an exit edge: the block
     is live at exit with 15.  */
/* { dg-do run } */
/* { dg-memprof-options "print_text=1:write_profile=0" } */

#include <stdlib.h>

struct stats
{
  long hits, misses;
};

struct cell
{
  volatile long n;
};

__attribute__ ((noipa)) void
fill (volatile long *a, int n)
{
  for (int i = 0; i < n; i++)
    a[i] = i % 10;
}

__attribute__ ((noipa)) long
scan (struct stats *s, const long *a, long n, long key)
{
  long found = 0;
  for (long i = 0; i < n; i++)
    if (a[i] == key)
      {
        s->hits++;
        found++;
      }
    else
      s->misses++;
  return found;
}

__attribute__ ((noipa)) void
maybe_bump (long *p, const char *flags, int n)
{
  for (int i = 0; i < n; i++)
    if (flags[i])
      ++*p;
}

__attribute__ ((noipa)) void
count_to_five (struct cell *c)
{
  for (;;)
    {
      c->n++;
      if (c->n == 5)
        exit (0);
    }
}

int
main (void)
{
  struct stats *s = calloc (1, sizeof *s);
  long *a = malloc (100 * sizeof *a);
  static const char flags[16];
  fill (a, 100);
  if (scan (s, a, 100, 3) != 10)
    return 1;
  free (a);
  free (s);
  maybe_bump ((long *) 0xdeadbeefdeadbee0ul, flags, 16);
  struct cell *c = calloc (1, sizeof *c);
  count_to_five (c);
  return 1;
}

/* { dg-output "(?=.*size \\(ave/min/max\\) 800.00 / 800 / 800\[^\n\]*\n\[^\n\]*access_count \\(ave/min/max\\): 200.00 / 200 / 200\n)(?=.*size \\(ave/min/max\\) 16.00 / 16 / 16\[^\n\]*\n\[^\n\]*access_count \\(ave/min/max\\): 200.00 / 200 / 200\n)(?=.*size \\(ave/min/max\\) 8.00 / 8 / 8\[^\n\]*\n\[^\n\]*access_count \\(ave/min/max\\): 15.00 / 15 / 15\n)" } */
/* { dg-final { scan-tree-dump "counted in a register over loop \[0-9\]+, added at its \[0-9\]+ exits: s_\[0-9\]+\\(D\\)->hits" "memprof" { -O2 } } } */
/* { dg-final { scan-tree-dump "counted in a register over loop \[0-9\]+, added at its \[0-9\]+ exits: \\*p_\[0-9\]+\\(D\\)" "memprof" { -O2 } } } */
/* { dg-final { scan-tree-dump "counted in a register over loop \[0-9\]+, added at its \[0-9\]+ exits: c_\[0-9\]+\\(D\\)->n" "memprof" { -O2 } } } */
