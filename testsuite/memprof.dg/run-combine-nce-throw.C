// With -fnon-call-exceptions a division that traps may throw (here from
// the SIGFPE handler), and the exception leaves the loop, and the
// function, by no edge of the CFG: counts kept in a register until the
// loop's exits (combine.cc: a strided access's runs, an invariant
// access's count) would never reach the shadow.  Such a loop is counted
// access by access.  sum loads a[0] to a[50] before 1000 / (50 - 50)
// traps (51), and touch loads *p in each of those iterations (51): 102
// accesses to the 400-byte block.
// { dg-do run }
// { dg-options "-fplugin-arg-memprof-dump -fnon-call-exceptions" }
// { dg-memprof-options "print_text=1:write_profile=0" }

#include <csignal>
#include <cstdlib>

struct trapped
{
};

static void
on_fpe (int)
{
  throw trapped ();
}

__attribute__ ((noipa)) long
sum (const int *a, long n, long d)
{
  long s = 0;
  for (long i = 0; i < n; i++)
    {
      s += a[i];
      s += 1000 / (d - i);
    }
  return s;
}

__attribute__ ((noipa)) long
touch (const int *p, long n, long d)
{
  long s = 0;
  for (long i = 0; i < n; i++)
    {
      s += *p;
      s += 1000 / (d - i);
    }
  return s;
}

int
main ()
{
  struct sigaction sa = {};
  sa.sa_handler = on_fpe;
  sa.sa_flags = SA_NODEFER;
  sigaction (SIGFPE, &sa, 0);
  int *a = (int *) malloc (100 * sizeof (int));
  long r = 0;
  try
    {
      r += sum (a, 100, 50);
    }
  catch (trapped &)
    {
      r += 1;
    }
  try
    {
      r += touch (a + 7, 100, 50);
    }
  catch (trapped &)
    {
      r += 1;
    }
  free (a);
  return r == 2 ? 0 : 1;
}

// { dg-output "size \\(ave/min/max\\) 400.00 / 400 / 400\[^\n\]*\n\[^\n\]*access_count \\(ave/min/max\\): 102.00 / 102 / 102\n" }
// { dg-final { scan-tree-dump-times "strided over loop" 0 "memprof" } }
// { dg-final { scan-tree-dump-times "counted in a register over loop" 0 "memprof" } }
