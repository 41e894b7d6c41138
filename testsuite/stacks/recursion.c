/* Recursion that allocates at every level: a binary tree built by direct
   recursion (two recursive call sites, so 2^depth distinct call stacks),
   and the same shape built by mutual recursion (even calls odd calls
   even).  Prints the number of allocations it made and a checksum, so a
   profile's totals can be checked against the program's own count.
   Argument: the depth (default 10).  */
#include <stdio.h>
#include <stdlib.h>

struct node
{
  struct node *left, *right;
  long value;
};

static long allocations;

static struct node *
new_node (long value)
{
  struct node *node = malloc (sizeof *node);
  allocations++;
  node->value = value;
  node->left = node->right = NULL;
  return node;
}

/* Direct recursion.  */
static struct node *
build (int depth)
{
  struct node *node = malloc (sizeof *node);
  allocations++;
  node->value = depth;
  node->left = node->right = NULL;
  if (depth > 0)
    {
      node->left = build (depth - 1);
      node->right = build (depth - 1);
    }
  return node;
}

/* Mutual recursion.  */
static struct node *build_odd (int depth);

static struct node *
build_even (int depth)
{
  struct node *node = new_node (2 * depth);
  if (depth > 0)
    {
      node->left = build_odd (depth - 1);
      node->right = build_odd (depth - 1);
    }
  return node;
}

static struct node *
build_odd (int depth)
{
  struct node *node = malloc (sizeof *node);
  allocations++;
  node->value = 2 * depth + 1;
  node->left = node->right = NULL;
  if (depth > 0)
    {
      node->left = build_even (depth - 1);
      node->right = build_even (depth - 1);
    }
  return node;
}

static long
sum_and_free (struct node *node)
{
  if (node == NULL)
    return 0;
  long sum = node->value + sum_and_free (node->left)
             + sum_and_free (node->right);
  free (node);
  return sum;
}

int
main (int argc, char **argv)
{
  int depth = argc > 1 ? atoi (argv[1]) : 10;
  long checksum = 0;

  for (int round = 0; round < 3; round++)
    {
      checksum += sum_and_free (build (depth));
      checksum += sum_and_free (build_even (depth));
    }
  printf ("allocations %ld checksum %ld\n", allocations, checksum);
  return 0;
}
