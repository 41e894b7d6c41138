/* With the garbage collector forced to run at every opportunity
   (ggc-min-expand=0, ggc-min-heapsize=0), the trees the plugin keeps
   across functions (its GC roots) must survive: several functions and
   globals, no ICE, the same verdicts as usual.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-dump --param ggc-min-expand=0 --param ggc-min-heapsize=0" } */

#include <string.h>

int counts[16];
long total;
struct node
{
  struct node *next;
  int value;
};
struct node *head;

__attribute__ ((noipa)) void
count (int i)
{
  counts[i & 15]++;
}

__attribute__ ((noipa)) long
sum_list (void)
{
  long s = 0;
  for (struct node *n = head; n; n = n->next)
    s += n->value;
  total = s;
  return s;
}

__attribute__ ((noipa)) void
copy_counts (int *dst, size_t n)
{
  memcpy (dst, counts, n);
}

__attribute__ ((noipa)) int
local_work (int v)
{
  int buf[8];
  for (int i = 0; i < 8; i++)
    buf[i] = v + i;
  count (buf[v & 7]);
  return buf[3];
}

/* { dg-final { scan-tree-dump "memprof: instrument load counts\\\[" "memprof" } } */
/* { dg-final { scan-tree-dump "memprof: instrument store counts\\\[" "memprof" } } */
/* { dg-final { scan-tree-dump "memprof: instrument load head " "memprof" } } */
/* { dg-final { scan-tree-dump "memprof: instrument load n_\[0-9\]+->value " "memprof" } } */
/* { dg-final { scan-tree-dump "memprof: instrument store total " "memprof" } } */
/* { dg-final { scan-tree-dump "memprof: instrument range store dst_\[0-9\]+\\(D\\) " "memprof" } } */
/* { dg-final { scan-tree-dump "memprof: instrument range load &counts " "memprof" } } */
/* { dg-final { scan-tree-dump "totals for local_work: 0 instrumented" "memprof" } } */
