/* Real code from Debian's gcc-12-source: libiberty's hash table
   (hashtab.c) and splay tree (splay-tree.c), the containers GCC itself is
   built on, used as a compiler's symbol tables are: identifiers are
   interned in a hash table, declarations are kept in a splay tree keyed by
   their number, scopes come and go, and every few rounds everything is
   thrown away.  bench/run.py extracts libiberty's sources and builds them
   with this driver.  Argument: scale (default 1).  */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashtab.h"
#include "splay-tree.h"

/* The allocation entry points libiberty expects from its xmalloc.c.  */
static void *
checked (void *block)
{
  if (block == NULL)
    {
      fprintf (stderr, "libiberty_symtab: out of memory\n");
      exit (1);
    }
  return block;
}

void *
xmalloc (size_t size)
{
  return checked (malloc (size ? size : 1));
}

void *
xcalloc (size_t count, size_t size)
{
  return checked (calloc (count ? count : 1, size ? size : 1));
}

void *
xrealloc (void *old, size_t size)
{
  return checked (realloc (old, size ? size : 1));
}

struct declaration
{
  const char *name;
  long uses;
  int scope;
  char kind[24];
};

static hashval_t
hash_identifier (const void *identifier)
{
  return htab_hash_string (identifier);
}

static int
equal_identifiers (const void *a, const void *b)
{
  return strcmp (a, b) == 0;
}

static int
compare_numbers (splay_tree_key a, splay_tree_key b)
{
  return a < b ? -1 : a > b;
}

static void
free_declaration (splay_tree_value value)
{
  free ((struct declaration *) value);
}

static int
count_uses (splay_tree_node node, void *total)
{
  *(long *) total += ((struct declaration *) node->value)->uses;
  return 0;
}

int
main (int argc, char **argv)
{
  double scale = argc > 1 ? atof (argv[1]) : 1.0;
  unsigned long state = 17;
  long checksum = 0;
  for (long round = 0; round < (long) (40 * scale) + 1; round++)
    {
      htab_t identifiers = htab_create_alloc (
          64, hash_identifier, equal_identifiers, free, xcalloc, free);
      splay_tree declarations
          = splay_tree_new (compare_numbers, NULL, free_declaration);
      for (long i = 0; i < 60000; i++)
        {
          char name[32];
          state = state * 6364136223846793005UL + 1442695040888963407UL;
          snprintf (name, sizeof name, "id_%lu", (state >> 35) % 20000);
          void **slot = htab_find_slot (identifiers, name, INSERT);
          if (*slot == NULL)
            *slot = strcpy (xmalloc (strlen (name) + 1), name);
          splay_tree_key number = (state >> 20) % 50000;
          splay_tree_node node = splay_tree_lookup (declarations, number);
          if (node)
            ((struct declaration *) node->value)->uses++;
          else
            {
              struct declaration *declaration = xmalloc (sizeof *declaration);
              declaration->name = *slot;
              declaration->uses = 1;
              declaration->scope = (int) (i / 1000);
              snprintf (declaration->kind, sizeof declaration->kind, "var");
              splay_tree_insert (declarations, number,
                                 (splay_tree_value) declaration);
            }
          /* Leaving a scope: its oldest declarations go.  */
          if (i % 1000 == 999)
            for (int j = 0; j < 300; j++)
              {
                splay_tree_node first = splay_tree_min (declarations);
                if (first == NULL)
                  break;
                splay_tree_remove (declarations, first->key);
              }
        }
      long uses = 0;
      splay_tree_foreach (declarations, count_uses, &uses);
      checksum += uses + (long) htab_elements (identifiers);
      splay_tree_delete (declarations);
      htab_delete (identifiers);
    }
  printf ("libiberty_symtab %ld\n", checksum);
  return 0;
}
