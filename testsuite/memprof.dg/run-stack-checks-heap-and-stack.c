/* The run-time stack check of a pointer parameter the analysis cannot
   prove (gcc-plugin/stack_checks.cc): tally_add is exported, so its
   callers are unknown; it tests T once per call against the running
   thread's stack.  Called with a heap block (100 calls), its accesses
   are counted: 200, a load and a store of t->n per call (main reads it
   once more: 201).  Called with a local of the fiber, whose stack is a
   malloc'd block (300 calls), they are counted too, as the block's: 600
   (602 with its reset and its read); a fiber's stack is not the
   thread's.  Called with a local of main (500 calls), they are skipped:
   the stats count no access on the stack.  A check that skipped a heap
   pointer would lose the 201 or the 602; one that never skipped would
   count 1000 on the stack.  */
/* { dg-do run } */
/* { dg-options "-O2 -fplugin-arg-memprof-dump" } */
/* { dg-memprof-options "write_profile=0:stats=1" } */

#include <stdlib.h>
#include <ucontext.h>

#define FIBER_STACK_SIZE (64 * 1024)

struct tally
{
  long n;
};

__attribute__ ((noipa)) void
tally_add (struct tally *t, long v)
{
  t->n += v;
}

__attribute__ ((noipa)) void
tally_calls (struct tally *t, int calls)
{
  for (int i = 0; i < calls; i++)
    tally_add (t, i);
}

__attribute__ ((noipa)) void
tally_reset (struct tally *t)
{
  t->n = 0;
}

__attribute__ ((noipa)) long
tally_value (struct tally *t)
{
  return t->n;
}

static ucontext_t main_context, fiber_context;
static long fiber_result;

/* The fiber's tally is touched only through the exported functions (the
   fiber's own accesses to its locals would be skipped by the local
   variable rule).  */
static void
fiber_main (void)
{
  struct tally t;
  tally_reset (&t);
  tally_calls (&t, 300);
  fiber_result = tally_value (&t);
}

int
main (void)
{
  struct tally local = { 0 };
  struct tally *heap = calloc (1, sizeof *heap);
  char *stack = malloc (FIBER_STACK_SIZE);
  if (heap == NULL || stack == NULL || getcontext (&fiber_context) != 0)
    return 1;
  tally_calls (heap, 100);
  tally_calls (&local, 500);
  fiber_context.uc_stack.ss_sp = stack;
  fiber_context.uc_stack.ss_size = FIBER_STACK_SIZE;
  fiber_context.uc_link = &main_context;
  makecontext (&fiber_context, fiber_main, 0);
  if (swapcontext (&main_context, &fiber_context) != 0)
    return 1;
  long result = heap->n + local.n + fiber_result;
  free (stack);
  free (heap);
  return result == 4950 + 124750 + 44850 ? 0 : 1;
}

/* { dg-final { scan-tree-dump "1 update\\(s\\) skipped at run time when their pointer parameter is on the thread's stack \\(1 parameter" "memprof" } } */
/* The heap: 201 + 602, the stack: none.  */
/* { dg-output "heap 803 \\(\[^)\]*\\), stack 0 \\(" } */
