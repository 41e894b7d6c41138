/* memcpy from a heap pointer into a local buffer: the range store into
   the local is skipped, the range load from the other pointer is
   instrumented.  */
/* { dg-do compile } */

#include <string.h>

void consume (char *);

__attribute__ ((noipa)) void
snapshot (const char *src, size_t n)
{
  char buf[64];
  memcpy (buf, src, n);
  consume (buf);
}

/* { dg-final { scan-tree-dump-times "memprof: skip range store &buf \\(stack: local variable\\)" 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: instrument range load src_\[0-9\]+\\(D\\) " 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: instrument range store " 0 "memprof" } } */
