/* Code that runs on a stack it allocated itself (a makecontext fiber on a
   malloc'd stack): there, the automatic variables of every frame are in a
   heap block.  The fiber's helpers receive the address of the fiber's
   local tally; by default the stack analysis across calls proves that
   parameter and skips the accesses, which then miss the heap block's
   count.  -fplugin-arg-memprof-other-frames=0 keeps them instrumented:
   at -O2, where the fiber's own frame is touched only through the
   helpers, the heap profile is the same as with stack-analysis=none (at
   -O0 too, where the step across calls does not run).  A fiber function
   that touches its own locals directly needs stack-analysis=none.

   soundness-control: -fplugin-arg-memprof-other-frames=0 at -O2
   (the soundness suite also builds without the option at -O2 and
   requires the heap profiles to differ: the option is what makes them
   equal).  */
/* { dg-do run } */
/* { dg-options "-fplugin-arg-memprof-dump -fplugin-arg-memprof-other-frames=0" } */
/* { dg-memprof-options "write_profile=0" } */

#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

#define FIBER_STACK_SIZE (64 * 1024)

struct tally
{
  int counts[16];
  int n;
};

static ucontext_t main_context, fiber_context;
static int fiber_result;

__attribute__ ((noinline, noclone)) static void
tally_init (struct tally *t)
{
  for (int i = 0; i < 16; i++)
    t->counts[i] = 0;
  t->n = 0;
}

__attribute__ ((noinline, noclone)) static void
tally_add (struct tally *t, int v)
{
  t->counts[v & 15]++;
  t->n++;
}

__attribute__ ((noinline, noclone)) static int
tally_sum (struct tally *t)
{
  int sum = t->n;
  for (int i = 0; i < 16; i++)
    sum += t->counts[i] * i;
  return sum;
}

static void
fiber_main (void)
{
  struct tally t;
  tally_init (&t);
  for (int i = 0; i < 1000; i++)
    tally_add (&t, i);
  fiber_result = tally_sum (&t);
}

int
main (void)
{
  char *stack = malloc (FIBER_STACK_SIZE);
  if (stack == NULL || getcontext (&fiber_context) != 0)
    return 1;
  fiber_context.uc_stack.ss_sp = stack;
  fiber_context.uc_stack.ss_size = FIBER_STACK_SIZE;
  fiber_context.uc_link = &main_context;
  makecontext (&fiber_context, fiber_main, 0);
  if (swapcontext (&main_context, &fiber_context) != 0)
    return 1;
  printf ("%d\n", fiber_result);
  free (stack);
  return 0;
}

/* { dg-output "8468\n" } */
/* { dg-final { scan-tree-dump "totals for tally_add: 4 instrumented" "memprof" } } */
/* { dg-final { scan-tree-dump-times "callers' frames\\)" 0 "memprof" } } */
