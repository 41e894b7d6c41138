/* A JSON-like document built in memory (objects of named members, arrays,
   numbers and strings), walked to sum and measure it, then freed; many
   documents in turn.  Argument: scale (default 1).  */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum kind
{
  NUMBER,
  STRING,
  ARRAY,
  OBJECT
};

struct value
{
  enum kind kind;
  char *name; /* member name inside an object */
  double number;
  char *text;
  struct value **items;
  size_t count, capacity;
};

static struct value *
new_value (enum kind kind)
{
  struct value *v = calloc (1, sizeof *v);
  v->kind = kind;
  return v;
}

static void
append (struct value *parent, struct value *child)
{
  if (parent->count == parent->capacity)
    {
      parent->capacity = parent->capacity ? parent->capacity * 2 : 4;
      parent->items
          = realloc (parent->items, parent->capacity * sizeof *parent->items);
    }
  parent->items[parent->count++] = child;
}

static struct value *
build (unsigned long *state, int depth)
{
  *state = *state * 6364136223846793005UL + 1442695040888963407UL;
  unsigned long r = *state >> 33;
  if (depth == 0 || r % 5 == 0)
    {
      struct value *leaf = new_value (r % 2 ? NUMBER : STRING);
      char text[32];
      snprintf (text, sizeof text, "value-%lu", r % 100000);
      if (leaf->kind == NUMBER)
        leaf->number = (double) (r % 1000);
      else
        leaf->text = strdup (text);
      return leaf;
    }
  struct value *node = new_value (r % 3 ? OBJECT : ARRAY);
  for (unsigned long i = 0; i < 2 + r % 6; i++)
    {
      struct value *child = build (state, depth - 1);
      if (node->kind == OBJECT)
        {
          char name[24];
          snprintf (name, sizeof name, "field%lu", i);
          child->name = strdup (name);
        }
      append (node, child);
    }
  return node;
}

static double
walk (const struct value *v, size_t *bytes)
{
  double sum = 0;
  if (v->name)
    *bytes += strlen (v->name);
  switch (v->kind)
    {
    case NUMBER:
      return v->number;
    case STRING:
      *bytes += strlen (v->text);
      return 1;
    default:
      for (size_t i = 0; i < v->count; i++)
        sum += walk (v->items[i], bytes);
      return sum;
    }
}

static void
release (struct value *v)
{
  for (size_t i = 0; i < v->count; i++)
    release (v->items[i]);
  free (v->items);
  free (v->name);
  free (v->text);
  free (v);
}

int
main (int argc, char **argv)
{
  double scale = argc > 1 ? atof (argv[1]) : 1.0;
  unsigned long state = 42;
  double total = 0;
  size_t bytes = 0;
  for (long doc = 0; doc < (long) (2500 * scale); doc++)
    {
      struct value *root = build (&state, 6);
      total += walk (root, &bytes);
      release (root);
    }
  printf ("json_tree %.0f %zu\n", total, bytes);
  return 0;
}
