/* run-param-callers.c with -fipa-pta: the pointer to a caller's local
   that through_memory loads from memory is proven by its points-to set
   (rule 6, "points-to set: other frames"); the soundness suite compares
   the heap profile with stack-analysis=none.  */
/* { dg-do run } */
/* { dg-options "-fipa-pta -fplugin-arg-memprof-dump" } */
/* { dg-memprof-options "write_profile=0" } */

#include "run-param-callers.c"

/* { dg-output "15\n" } */
/* { dg-final { scan-tree-dump "memprof: skip store MEM\[^\\n\]*\\(stack: points-to set: other frames\\)" "memprof" { -O2 } } } */
