/* A function without counted accesses is not copied; with
   sample-accesses, a loop of it that calls a function gets a tick (the
   countdown goes on, so library calls the runtime counts are sampled in
   time), a loop without calls none.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-dump -fplugin-arg-memprof-sample-accesses" } */

#include <string.h>

long
lengths (const char *text, long times)
{
  long total = 0;
  for (long i = 0; i < times; i++)
    total += strlen (text + (i & 1));
  return total;
}

long
squares (long n)
{
  long total = 0;
  for (long i = 0; i < n; i++)
    total += i * i;
  return total;
}

/* { dg-final { scan-tree-dump "sample-accesses: lengths not copied, 1 loop tick\\(s\\)" "memprof" } } */
/* { dg-final { scan-tree-dump-times "sample-accesses: squares" 0 "memprof" } } */
/* { dg-final { scan-tree-dump-times "__memprof_access_switch \\(100, 9900\\);" 1 "memprof" } } */
