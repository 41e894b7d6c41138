/* The run-time stack check of a pointer loaded from memory
   (gcc-plugin/stack_checks.cc): tally_bump loads H->T and makes two
   updates through it (one adding 2 for the load and the store of t->n,
   one for the store of t->last), so T is tested where it is loaded.  H
   is a heap block in every call; T is a heap block in 100 calls (300
   accesses, and main's two reads: 302) and a local of main in 500
   (skipped).  A check that skipped the heap T would lose its count; one
   that never skipped would count 1500 accesses on the stack.  */
/* { dg-do run } */
/* { dg-options "-O2 -fplugin-arg-memprof-dump" } */
/* { dg-memprof-options "write_profile=0:stats=1" } */

#include <stdlib.h>

struct tally
{
  long n;
  long last;
};

struct holder
{
  struct tally *t;
};

__attribute__ ((noipa)) void
tally_bump (struct holder *h, long v)
{
  struct tally *t = h->t;
  t->n += v;
  t->last = v;
}

int
main (void)
{
  struct tally local = { 0, 0 };
  struct tally *heap = calloc (1, sizeof *heap);
  struct holder *h = malloc (sizeof *h);
  if (heap == NULL || h == NULL)
    return 1;
  h->t = heap;
  for (int i = 0; i < 100; i++)
    tally_bump (h, i);
  h->t = &local;
  for (int i = 0; i < 500; i++)
    tally_bump (h, i);
  long result = heap->n + heap->last + local.n;
  free (h);
  free (heap);
  return result == 4950 + 99 + 124750 ? 0 : 1;
}

/* { dg-final { scan-tree-dump "2 update\\(s\\) skipped at run time when their pointer is on the thread's stack \\(0 parameter\\(s\\) tested at entry, 1 loaded" "memprof" } } */
/* The heap: T's 302, H's 600 loads and 2 stores: 904; the stack: none.  */
/* { dg-output "heap 904 \\(\[^)\]*\\), stack 0 \\(" } */
