/* With remarks, a note at each allocation call the profile matched: its
   class, its contexts, their density and lifetime, and what was done.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-remarks -fplugin-arg-memprof-cold-lifetime=1" } */
#include <stdlib.h>

void *
make_log (void)
{
  return malloc (64); /* { dg-message "memprof: .malloc. call: cold \\(1 context, 4 allocations, lifetime access density 0 accesses/byte/s, mean lifetime 5 s\\); calls the hinted entry point" } */
}

void *
make_other (void)
{
  return calloc (1, 64); /* No note: the profile has no context here.  */
}
