/* Over-reservation, as in Memoro's `reserve (largeMap.size ())' example: a
   report builder sizes its output buffer for every entry of a large table
   ("in case all of them match"), but only the few entries that match a
   filter are ever written.  Most bytes of that allocation are never
   touched: the profile shows a large TotalSize with a tiny access density.  */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct entry
{
  unsigned id;
  unsigned score;
  char name[24];
};

struct table
{
  struct entry *entries;
  size_t count;
};

static struct table
load_table (size_t count)
{
  struct table table = { malloc (count * sizeof (struct entry)), count };
  for (size_t i = 0; i < count; i++)
    {
      table.entries[i].id = (unsigned) i;
      table.entries[i].score = (unsigned) ((i * 2654435761u) % 1000);
      snprintf (table.entries[i].name, sizeof table.entries[i].name, "item-%zu",
                i);
    }
  return table;
}

/* The over-reserving function: room for every entry, few used.  */
static size_t
select_top (const struct table *table, unsigned threshold,
            struct entry **selected)
{
  struct entry *out = malloc (table->count * sizeof (struct entry));
  size_t used = 0;
  for (size_t i = 0; i < table->count; i++)
    if (table->entries[i].score >= threshold)
      out[used++] = table->entries[i];
  *selected = out;
  return used;
}

int
main (void)
{
  struct table table = load_table (50000);
  unsigned long checksum = 0;

  for (int round = 0; round < 20; round++)
    {
      struct entry *top;
      size_t found = select_top (&table, 995, &top);
      for (size_t i = 0; i < found; i++)
        checksum += top[i].id;
      free (top);
    }
  printf ("checksum %lu\n", checksum);
  free (table.entries);
  return 0;
}
