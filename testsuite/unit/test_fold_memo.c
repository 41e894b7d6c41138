/* The fold memo (fold_memo.c): the context it gives for a raw stack is
   the one stack_fold_recursion, the cut to MAX and depot_intern give, on
   made-up recursive stacks (0xe0000000 and up: no code lives there) of a
   few functions with several return addresses each, drawn at random and
   changed near their leaf as a recursive program's stacks change from one
   allocation to the next; and from several threads at once; and stepped
   from a kept node by fold_memo_extend, as the last folded walk does.  */

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "unit.h"

/* Few enough that the lists of kept frames (at most one frame a
   function, markers between) fit in the memo many times over.  */
#define FUNCTIONS 4
#define CALLS_PER_FUNCTION 2
#define STACK_FRAMES_MAX 60

/* A return address (not minus 1) in function F, its call C.  */
static uintptr_t
made_up_return (uint32_t base, unsigned f, unsigned c)
{
  return (uintptr_t) base + f * 0x1000 + c * 0x10 + 5;
}

/* The function of the pc RETURN_ADDRESS - 1, as the unwind tables would
   give it.  */
static uintptr_t
function_of_return (uintptr_t return_address)
{
  return (return_address - 1) & ~(uintptr_t) 0xfff;
}

/* The context the runtime gave before the memo: stack_finish's steps.  */
static struct depot_context *
plain_context (const uintptr_t *whole, int count, int max)
{
  uintptr_t pcs[STACK_CAPTURE_MAX], functions[STACK_CAPTURE_MAX];
  for (int i = 0; i < count; i++)
    {
      pcs[i] = whole[i] - 1;
      functions[i] = function_of_return (whole[i]);
    }
  count = stack_fold_recursion (pcs, functions, count);
  if (count > max)
    count = max;
  return depot_intern (pcs, (uint32_t) count);
}

static struct depot_context *
memo_context (const uintptr_t *whole, int count, int max)
{
  uintptr_t functions[STACK_CAPTURE_MAX];
  /* All known (stack_function_of would look made-up addresses up in
     vain, each its own function).  */
  for (int i = 0; i < count; i++)
    functions[i] = function_of_return (whole[i]);
  return fold_memo_context (whole, functions, count, max);
}

/* The next stack after WHOLE[0, COUNT) (leaf first) in the made-up code
   at BASE: the root side of the last one kept (*KEEP frames, moved to the
   end with their NODES when given), its leaf side redrawn from *SEED, as
   a recursive program's stacks change from one allocation to the next.
   Returns the new count.  */
static int
next_stack (uintptr_t *whole, const struct fold_node **nodes, int count,
            int *keep, uint32_t base, unsigned *seed)
{
  int kept = count > 0 ? (int) (rand_r (seed) % (unsigned) count) : 0;
  int last = count;
  count = kept + 1 + (int) (rand_r (seed) % (STACK_FRAMES_MAX - kept));
  memmove (whole + (count - kept), whole + (last - kept), kept * sizeof *whole);
  if (nodes != NULL)
    memmove (nodes + (count - kept), nodes + (last - kept),
             kept * sizeof *nodes);
  for (int i = 0; i < count - kept; i++)
    {
      unsigned f = rand_r (seed) % FUNCTIONS;
      unsigned c = rand_r (seed) % CALLS_PER_FUNCTION;
      whole[i] = made_up_return (base, f, c);
    }
  *keep = kept;
  return count;
}

/* Compare ROUNDS stacks drawn from SEED in the made-up code at BASE;
   returns how many differed.  */
static unsigned
compare_stacks (uint32_t base, unsigned seed, int rounds)
{
  uintptr_t whole[STACK_FRAMES_MAX];
  int count = 0;
  unsigned differed = 0;

  for (int round = 0; round < rounds; round++)
    {
      int keep;
      count = next_stack (whole, NULL, count, &keep, base, &seed);
      int max = round % 4 == 0 ? 5 : 30;
      struct depot_context *plain = plain_context (whole, count, max);
      struct depot_context *memo = memo_context (whole, count, max);
      if (memo != plain)
        differed++;
    }
  return differed;
}

START_TEST (test_memo_gives_the_folded_context)
{
  ck_assert_uint_eq (compare_stacks (0xe0000000, 1, 20000), 0);
}
END_TEST

START_TEST (test_memo_folds_recursion)
{
  /* f0 f1 f0 f1 f0 (root last): folded, f1's and f0's inner frames kept
     after a marker; a context of fewer frames than the raw stack.  */
  uintptr_t whole[5];
  for (int i = 0; i < 5; i++)
    whole[i] = made_up_return (0xe1000000, (unsigned) i % 2, (unsigned) i);
  struct depot_context *memo = memo_context (whole, 5, 30);
  ck_assert_ptr_eq (memo, plain_context (whole, 5, 30));
  ck_assert_uint_lt (memo->depth, 5);
}
END_TEST

/* As the last folded walk uses the memo (stack.c): the root side of the
   last stack kept with the node after each of its frames, only the new
   leaf side stepped from the node of the last kept frame
   (fold_memo_extend); ROUNDS stacks drawn from SEED, how many differed
   from the plain context.  */
static unsigned
compare_extended (uint32_t base, unsigned seed, int rounds)
{
  uintptr_t whole[STACK_FRAMES_MAX], functions[STACK_FRAMES_MAX];
  const struct fold_node *nodes[STACK_FRAMES_MAX];
  int count = 0;
  unsigned differed = 0;

  for (int round = 0; round < rounds; round++)
    {
      int keep;
      count = next_stack (whole, nodes, count, &keep, base, &seed);
      for (int i = 0; i < count; i++)
        functions[i] = function_of_return (whole[i]);
      const struct fold_node *node
          = fold_memo_extend (keep > 0 ? nodes[count - keep] : NULL, whole,
                              functions, count - keep, nodes);
      ck_assert_ptr_nonnull (node);
      int max = round % 4 == 0 ? 5 : 30;
      if (fold_memo_node_context (node, max)
          != plain_context (whole, count, max))
        differed++;
    }
  return differed;
}

START_TEST (test_memo_extended_from_a_kept_node)
{
  ck_assert_uint_eq (compare_extended (0xe3000000, 3, 20000), 0);
}
END_TEST

/* Steps from one node by WIDE return addresses (each in a function of
   its own), more than a node's slots hold: as binary_trees steps from
   the C library's start-up frame by over a hundred return addresses of
   main.  Each is the plain context, and found again the second time
   (no step or context missed in the memo).  */
#define WIDE 200

START_TEST (test_memo_wide_node)
{
  uintptr_t root = made_up_return (0xe4000000, 0, 0);
  uintptr_t root_function = function_of_return (root);
  const struct fold_node *root_node[1];
  ck_assert_ptr_nonnull (
      fold_memo_extend (NULL, &root, &root_function, 1, root_node));
  for (int pass = 0; pass < 2; pass++)
    {
      uint64_t misses = fold_memo_thread_misses ();
      for (unsigned k = 0; k < WIDE; k++)
        {
          uintptr_t whole[2] = { made_up_return (0xe4001000, k, k % 3), root };
          uintptr_t functions[1] = { function_of_return (whole[0]) };
          const struct fold_node *nodes[1];
          const struct fold_node *node
              = fold_memo_extend (root_node[0], whole, functions, 1, nodes);
          ck_assert_ptr_nonnull (node);
          ck_assert_ptr_eq (fold_memo_node_context (node, 30),
                            plain_context (whole, 2, 30));
        }
      if (pass == 1)
        ck_assert_uint_eq (fold_memo_thread_misses (), misses);
    }
}
END_TEST

static void *
compare_in_thread (void *seed)
{
  return (void *) (uintptr_t) compare_stacks (
      0xe2000000, (unsigned) (uintptr_t) seed, 5000);
}

START_TEST (test_memo_shared_by_threads)
{
  pthread_t threads[4];
  uintptr_t differed = 0;
  for (uintptr_t i = 0; i < 4; i++)
    ck_assert_int_eq (
        pthread_create (&threads[i], NULL, compare_in_thread, (void *) (i + 7)),
        0);
  for (int i = 0; i < 4; i++)
    {
      void *result;
      pthread_join (threads[i], &result);
      differed += (uintptr_t) result;
    }
  ck_assert_uint_eq (differed, 0);
}
END_TEST

Suite *
fold_memo_suite (void)
{
  Suite *suite = suite_create ("fold_memo");
  TCase *memo = tcase_create ("memo");

  tcase_set_timeout (memo, 20);
  tcase_add_test (memo, test_memo_gives_the_folded_context);
  tcase_add_test (memo, test_memo_folds_recursion);
  tcase_add_test (memo, test_memo_extended_from_a_kept_node);
  tcase_add_test (memo, test_memo_shared_by_threads);
  tcase_add_test (memo, test_memo_wide_node);
  suite_add_tcase (suite, memo);
  return suite;
}
