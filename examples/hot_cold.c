/* A program with one hot allocation site (a small table read over and
   over), one cold site (a large buffer written once and kept to the end),
   and one over-reserved buffer (room for 100,000 records, 1,000 used).
   Built with the plugin, every load and store below is counted.  */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct record
{
  uint64_t key;
  uint64_t value;
};

static uint32_t *
make_lookup_table (void)
{
  uint32_t *table = malloc (256 * sizeof *table);
  for (int i = 0; i < 256; i++)
    table[i] = (uint32_t) (i * 2654435761u);
  return table;
}

static char *
make_cold_log (size_t size)
{
  char *log = malloc (size);
  memset (log, '.', size); /* one pass, then never read again */
  return log;
}

static struct record *
reserve_records (size_t expected)
{
  /* Reserves for the worst case; the common case uses 1% of it.  */
  return malloc (expected * sizeof (struct record));
}

int
main (void)
{
  uint32_t *table = make_lookup_table ();
  char *log = make_cold_log (1 << 20);
  struct record *records = reserve_records (100000);
  uint64_t hash = 0;

  for (int i = 0; i < 1000; i++)
    {
      records[i].key = (uint64_t) i;
      records[i].value = (uint64_t) i * 3;
    }
  for (int round = 0; round < 2000000; round++)
    hash = hash * 31 + table[round & 255];
  for (int i = 0; i < 1000; i++)
    hash ^= records[i].value;
  printf ("hash %016llx, log starts with '%c'\n", (unsigned long long) hash,
          log[0]);
  free (table);
  free (records);
  /* The log stays allocated until exit.  */
  return 0;
}
