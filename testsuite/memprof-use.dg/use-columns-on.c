/* columns=1 compares columns even in a unit compiled from preprocessed
   input: the profile (of a build from the source) puts the malloc call
   that NEW_BUFFER expands at the macro's name, column 10, the .i at 20,
   so nothing matches.  */
/* { dg-do compile } */
/* { dg-options "-save-temps -fplugin-arg-memprof-columns=1 -fplugin-arg-memprof-cold-lifetime=100" } */
#include <stdlib.h>

#define NEW_BUFFER(size) ((char *) malloc ((size) + 1))

char *
make_log (size_t size)
{
  return NEW_BUFFER (size);
}

/* { dg-final { scan-tree-dump "memprof-use: malloc call at \[^\n\]*use-columns-on.c:14:20: frames make_log:2:20: 0 contexts matched \\(0 cold, 0 hot, 0 notcold\\): no context matched; left alone" "memprof" } } */
