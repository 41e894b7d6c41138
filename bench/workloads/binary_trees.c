/* Binary trees (as in the benchmarks game): many short-lived trees of
   small nodes, one long-lived tree, every node visited.  Argument: scale
   (default 1).  */
#include <stdio.h>
#include <stdlib.h>

struct node
{
  struct node *left, *right;
};

static struct node *
build (int depth)
{
  struct node *node = malloc (sizeof *node);
  if (depth > 0)
    {
      node->left = build (depth - 1);
      node->right = build (depth - 1);
    }
  else
    node->left = node->right = NULL;
  return node;
}

static long
check (const struct node *node)
{
  return node->left ? 1 + check (node->left) + check (node->right) : 1;
}

static void
release (struct node *node)
{
  if (node->left)
    {
      release (node->left);
      release (node->right);
    }
  free (node);
}

int
main (int argc, char **argv)
{
  double scale = argc > 1 ? atof (argv[1]) : 1.0;
  int max_depth = 16;
  long total = 0;
  struct node *long_lived = build (max_depth);

  for (int depth = 4; depth <= max_depth; depth += 2)
    {
      long iterations
          = (long) ((1L << (max_depth - depth + 4)) * scale * 6) + 1;
      for (long i = 0; i < iterations; i++)
        {
          struct node *tree = build (depth);
          total += check (tree);
          release (tree);
        }
    }
  total += check (long_lived);
  release (long_lived);
  printf ("binary_trees %ld\n", total);
  return 0;
}
