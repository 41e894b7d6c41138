/* A profile of another program: none of its contexts is in this unit's
   functions and no call matches: a warning with the figures, and nothing
   is rewritten.  */
/* { dg-do compile } */
#include <stdlib.h>

void *
make_something (size_t size)
{
  return malloc (size);
}

/* { dg-warning "none of the 1 allocation calls of .\[^ \]*use-other-program.c. is in the profile .\[^ \]*use-other-program.(yaml|mprof). \\(2 contexts, none in the 1 functions of this unit\\): is it a profile of another program\\?" "" { target *-*-* } 0 } */
/* { dg-final { scan-tree-dump-times "rewritten:" 0 "memprof" } } */
