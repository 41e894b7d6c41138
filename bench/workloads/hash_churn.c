/* Hash-table churn: a chained table of string keys under a stream of
   inserts, lookups and deletes, the table grown by rehashing.  Argument:
   scale (default 1).  */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct entry
{
  struct entry *next;
  unsigned long hash;
  long value;
  char key[];
};

struct table
{
  struct entry **buckets;
  size_t size, count;
};

static unsigned long
hash_key (const char *key)
{
  unsigned long hash = 5381;
  while (*key)
    hash = hash * 33 + (unsigned char) *key++;
  return hash;
}

static void
grow (struct table *table)
{
  size_t size = table->size * 2;
  struct entry **buckets = calloc (size, sizeof *buckets);
  for (size_t i = 0; i < table->size; i++)
    for (struct entry *e = table->buckets[i], *next; e; e = next)
      {
        next = e->next;
        e->next = buckets[e->hash & (size - 1)];
        buckets[e->hash & (size - 1)] = e;
      }
  free (table->buckets);
  table->buckets = buckets;
  table->size = size;
}

static struct entry **
find (struct table *table, const char *key, unsigned long hash)
{
  struct entry **link = &table->buckets[hash & (table->size - 1)];
  while (*link && ((*link)->hash != hash || strcmp ((*link)->key, key) != 0))
    link = &(*link)->next;
  return link;
}

int
main (int argc, char **argv)
{
  double scale = argc > 1 ? atof (argv[1]) : 1.0;
  long operations = (long) (7000000 * scale);
  struct table table = { calloc (16, sizeof (struct entry *)), 16, 0 };
  unsigned long state = 12345;
  long found = 0;
  char key[32];

  for (long i = 0; i < operations; i++)
    {
      state = state * 6364136223846793005UL + 1442695040888963407UL;
      snprintf (key, sizeof key, "key-%lu", (state >> 33) % 200000);
      unsigned long hash = hash_key (key);
      struct entry **link = find (&table, key, hash);
      switch ((state >> 20) % 4)
        {
        case 0:
        case 1:
          if (*link == NULL)
            {
              size_t length = strlen (key) + 1;
              struct entry *e = malloc (sizeof *e + length);
              memcpy (e->key, key, length);
              e->hash = hash;
              e->value = i;
              e->next = NULL;
              *link = e;
              if (++table.count > table.size)
                grow (&table);
            }
          break;
        case 2:
          found += *link != NULL;
          break;
        default:
          if (*link)
            {
              struct entry *e = *link;
              *link = e->next;
              free (e);
              table.count--;
            }
        }
    }
  printf ("hash_churn %ld %zu\n", found, table.count);
  return 0;
}
