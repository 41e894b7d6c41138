/* The stack analysis across calls on a running program: the heap block's
   access count is exact whatever the proofs skip.  A helper called with a
   stack address and a heap address (must stay instrumented), a recursive
   descent threading a local state whose field points to the heap block,
   and a pointer to a local stored to memory, loaded back and passed on.
   The soundness suite checks that the heap profile is the same with
   stack-analysis=none (the block's count depends on the -O level).  */
/* { dg-do run } */
/* { dg-memprof-options "write_profile=0" } */

#include <stdio.h>
#include <stdlib.h>

struct state
{
  int *block;
  int depth, sum;
};

struct holder
{
  int *where;
};

__attribute__ ((noinline)) static void
bump (int *q, int i)
{
  q[i & 3] += i;
}

__attribute__ ((noinline)) static void
fill (struct state *s)
{
  for (int i = 0; i < 4; i++)
    s->block[i] = i + 1;
}

__attribute__ ((noinline)) static void
descend (struct state *s, int levels)
{
  s->depth++;
  if (levels == 0 || levels == 3)
    s->sum += s->block[levels & 3];
  if (levels > 0)
    descend (s, levels - 1);
  s->depth--;
}

__attribute__ ((noinline, noclone)) static void
through_memory (struct holder *h, int v)
{
  /* h->where was stored by the caller: a load, proven only by -fipa-pta's
     points-to set (run-param-callers-ipa-pta.c).  */
  h->where[1] = v;
}

int
main (void)
{
  int local[4] = { 0 };
  int *heap = calloc (4, sizeof (int));
  struct state s = { heap, 0, 0 };
  struct holder h = { local };
  int result;

  if (heap == NULL)
    return 1;
  for (int i = 0; i < 4; i++)
    {
      bump (local, i);
      bump (heap, i);
    }
  fill (&s);
  descend (&s, 3);
  through_memory (&h, 7);
  result = heap[2] + local[1] + s.sum + s.depth;
  printf ("%d\n", result);
  free (heap);
  return result == 15 ? 0 : 1;
}

/* { dg-output "15\n" } */
