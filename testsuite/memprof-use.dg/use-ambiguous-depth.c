/* An ambiguous call says why: the share of its contexts' bytes in each
   class, and the depth of callers that tells the classes apart.  Here
   both contexts pass through one middle function (the first caller
   disagrees) and part at its callers (depth 2), with 1000 cold bytes
   and 3000 hot ones.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-cold-lifetime=1 -fplugin-arg-memprof-clone-wrappers=0 -fplugin-arg-memprof-remarks" } */
#include <stdlib.h>

__attribute__ ((noinline, noipa)) static void *
wrapper (size_t size)
{
  return malloc (size); /* { dg-message "memprof: .malloc. call: ambiguous: its contexts disagree \\(2 contexts, \[^;\]*; bytes 25.0% cold, 75.0% hot, 0.0% notcold; callers disagree at depth 1 and tell the classes apart at depth 2\\); calls the context-classified entry point \\(2 cold or hot contexts, told apart by 2 caller frames; 2 for all\\)" } */
}

#include "ambiguous-callers.h"

/* { dg-final { scan-tree-dump "malloc call at \[^\n\]*:13:10: frames wrapper:2:10: 2 contexts matched \\(1 cold, 1 hot, 0 notcold\\): ambiguous: its contexts disagree \\(bytes 25.0% cold, 75.0% hot, 0.0% notcold; callers disagree at depth 1 and tell the classes apart at depth 2\\); calls the context-classified entry point \\(2 cold or hot contexts, told apart by 2 caller frames; 2 for all\\)" "memprof" } } */
