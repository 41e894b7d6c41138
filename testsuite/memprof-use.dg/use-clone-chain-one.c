/* With -fplugin-arg-memprof-clone-depth=1, one level of cloning: the
   program and profile of use-clone-chain.c, whose wrapper's contexts
   part only at its caller's callers, get no clone.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-cold-lifetime=1 -fplugin-arg-memprof-clone-depth=1" } */

#include "use-clone-chain.c"

/* { dg-final { scan-compiler-output "1 of 1 allocation calls matched, 1 ambiguous; 0 wrapper clones; rewritten: 0 cold, 0 hot" } } */
