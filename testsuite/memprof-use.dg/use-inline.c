/* An allocation inlined into two callers is matched through the inline
   chain: each inlined copy gets its caller's contexts, so one is cold and
   one is hot, and each is rewritten with its own hint.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-cold-lifetime=1" } */
#include <stdlib.h>

static inline __attribute__ ((always_inline)) void *
new_node (size_t size)
{
  return malloc (size);
}

void *
log_entry (void)
{
  return new_node (100);
}

void *
table_entry (void)
{
  return new_node (200);
}

/* { dg-final { scan-tree-dump "malloc call at \[^\n\]*:11:10: frames new_node:2:10 \\(inlined\\) < log_entry:2:10: 1 context matched \\(1 cold, 0 hot, 0 notcold\\): cold; calls the hinted entry point" "memprof" } } */
/* { dg-final { scan-tree-dump "malloc call at \[^\n\]*:11:10: frames new_node:2:10 \\(inlined\\) < table_entry:2:10: 1 context matched \\(0 cold, 1 hot, 0 notcold\\): hot; calls the hinted entry point" "memprof" } } */
/* { dg-final { scan-tree-dump "rewritten: _\[0-9\]+ = __memprof_hint_malloc \\(\[a-z_0-9\]+, 1\\);" "memprof" } } */
/* { dg-final { scan-tree-dump "rewritten: _\[0-9\]+ = __memprof_hint_malloc \\(\[a-z_0-9\]+, 254\\);" "memprof" } } */
