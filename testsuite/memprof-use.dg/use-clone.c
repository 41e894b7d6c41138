/* An allocation wrapper whose callers' contexts have different classes is
   cloned, once per class, and each clone's allocation call gets its
   class's hint: the callers of the cold allocations call the cold clone,
   those of the hot ones the hot clone.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-cold-lifetime=1" } */
#include <stdlib.h>

__attribute__ ((noinline)) void *
wrapper (size_t size)
{
  return malloc (size);
}

void *
for_log (void)
{
  return wrapper (100);
}

void *
for_table (void)
{
  return wrapper (200);
}

/* { dg-final { scan-compiler-output "2 matched here, 0 unmatched \\(stale\\); 1 of 1 allocation calls matched, 1 ambiguous; 2 wrapper clones; rewritten: 1 cold, 1 hot" } } */
/* { dg-final { scan-ipa-dump "wrapper/\[0-9\]+ cloned as wrapper.memprof_cold.0/\[0-9\]+ for 1 cold caller" "memprof-clone" } } */
/* { dg-final { scan-ipa-dump "wrapper/\[0-9\]+ cloned as wrapper.memprof_hot.1/\[0-9\]+ for 1 hot caller" "memprof-clone" } } */
/* { dg-final { scan-ipa-dump "malloc call in wrapper.memprof_cold.0/\[0-9\]+, the clone for 1 cold caller: calls the hinted entry point" "memprof-clone" } } */
/* { dg-final { scan-ipa-dump "malloc call in wrapper.memprof_hot.1/\[0-9\]+, the clone for 1 hot caller: calls the hinted entry point" "memprof-clone" } } */
/* { dg-final { scan-tree-dump "frames wrapper:2:10: 2 contexts matched \\(1 cold, 1 hot, 0 notcold\\): ambiguous: its contexts disagree \\(no byte counts; the first caller tells the classes apart\\); calls the context-classified entry point \\(2 cold or hot contexts, told apart by 1 caller frame; 1 for all\\)" "memprof" } } */
