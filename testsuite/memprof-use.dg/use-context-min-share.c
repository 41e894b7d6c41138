/* An ambiguous call whose cold and hot contexts hold few of its bytes
   (4%: 1000 cold, 3000 hot, 96000 not cold) is left alone below
   context-min-share (here 5%): classifying would cost every allocation
   a walk of its callers for little placed.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-cold-lifetime=1 -fplugin-arg-memprof-clone-wrappers=0 -fplugin-arg-memprof-remarks -fplugin-arg-memprof-context-min-share=5" } */
#include <stdlib.h>

__attribute__ ((noinline, noipa)) static void *
wrapper (size_t size)
{
  return malloc (size); /* { dg-message "memprof: .malloc. call: ambiguous: its contexts disagree \\(3 contexts, \[^;\]*; bytes 1.0% cold, 3.0% hot, 96.0% notcold; \[^)\]*\\); left alone: its cold and hot contexts hold 4.0% of its bytes, below context-min-share=5% \\(classifying costs every allocation a walk of 2 frames\\)" } */
}

#include "ambiguous-callers.h"

void *
for_other (void)
{
  return middle (9600);
}

/* { dg-final { scan-compiler-output "rewritten: 0 cold, 0 hot; globals: \[^;\]*; context-classified: 0" } } */
/* { dg-final { scan-tree-dump-times "rewritten:" 0 "memprof" } } */
