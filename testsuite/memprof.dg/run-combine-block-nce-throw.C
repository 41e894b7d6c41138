// With -fnon-call-exceptions a division or a load that traps may throw
// (here from the SIGFPE and SIGSEGV handlers), and the exception leaves
// the block, and the function, in the middle: with no handler in the
// function the statement does not end its block.  An update combining
// the accesses to one granule on both sides of it (the update sits
// before the first) would count accesses that never ran.  A statement
// that may throw ends a combined run, as a call does.
// around loads *p (1) and traps; called again, it loads and stores *p
// (2).  through loads *p (1) and faults on *q; called again, it loads *p,
// *q (= p + 1) and stores *p (3).  7 accesses to the 64-byte block;
// combined across the trapping statements they were 9.
// { dg-do run }
// { dg-options "-fplugin-arg-memprof-dump -fnon-call-exceptions" }
// { dg-memprof-options "print_text=1:write_profile=0" }

#include <csignal>
#include <cstdlib>

struct trapped
{
};

static void
on_trap (int)
{
  throw trapped ();
}

__attribute__ ((noipa)) void
around (long *p, long d)
{
  long s = *p;
  s += 1000 / d;
  *p = s;
}

__attribute__ ((noipa)) void
through (long *p, long *q)
{
  long s = *p;
  s += *q;
  *p = s;
}

int
main ()
{
  struct sigaction sa = {};
  sa.sa_handler = on_trap;
  sa.sa_flags = SA_NODEFER;
  sigaction (SIGFPE, &sa, 0);
  sigaction (SIGSEGV, &sa, 0);
  long *p = (long *) calloc (8, sizeof (long));
  int caught = 0;
  try
    {
      around (p, 0);
    }
  catch (trapped &)
    {
      caught++;
    }
  around (p, 1000);
  try
    {
      through (p, 0);
    }
  catch (trapped &)
    {
      caught++;
    }
  through (p, p + 1);
  free (p);
  return caught == 2 ? 0 : 1;
}

// { dg-output "size \\(ave/min/max\\) 64.00 / 64 / 64\[^\n\]*\n\[^\n\]*access_count \\(ave/min/max\\): 7.00 / 7 / 7\n" }
// { dg-final { scan-tree-dump-times "one update adds" 0 "memprof" } }
