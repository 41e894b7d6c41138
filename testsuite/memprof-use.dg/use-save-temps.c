/* A unit compiled from preprocessed input (here -save-temps: the driver
   compiles the .i it wrote) has lost its macros: the malloc call that
   NEW_BUFFER expands sits at column 20 of the .i's line, where a build
   from the source, and so the profile read from its DWARF, put it at the
   macro's name, column 10.  Such a unit matches by lines.  */
/* { dg-do compile } */
/* { dg-options "-save-temps -fplugin-arg-memprof-cold-lifetime=100" } */
#include <stdlib.h>

#define NEW_BUFFER(size) ((char *) malloc ((size) + 1))

char *
make_log (size_t size)
{
  return NEW_BUFFER (size);
}

char *
make_table (size_t size)
{
  return NEW_BUFFER (size + 1);
}

/* { dg-final { scan-tree-dump "memprof-use: malloc call at \[^\n\]*use-save-temps.c:15:20: frames make_log:2:20: 1 context matched \\(1 cold, 0 hot, 0 notcold\\): cold; calls the hinted entry point" "memprof" } } */
/* { dg-final { scan-tree-dump "memprof-use: malloc call at \[^\n\]*use-save-temps.c:21:20: frames make_table:2:20: 1 context matched \\(0 cold, 1 hot, 0 notcold\\): hot; calls the hinted entry point" "memprof" } } */
/* { dg-final { scan-compiler-output "profile \[^\n\]*use-save-temps.(yaml|mprof): 2 contexts; 2 matched here, 0 unmatched \\(stale\\); 2 of 2 allocation calls matched, 0 ambiguous; 0 wrapper clones; rewritten: 1 cold, 1 hot" } } */
