/* What the example modules (dependences.c, lifetime.c) share: their
   argument syntax, how they print an instruction id, and one hash table.
   A module of your own may include it too (docs/modules.md); everything
   here is static: no link-time name of its own.  */

#ifndef MEMPROF_MODULES_COMMON_H
#define MEMPROF_MODULES_COMMON_H

#include <memprof/module.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Set when a table could not grow: the output says some events were
   left out.  */
static int module_out_of_memory;

static inline uint64_t
module_hash (uint64_t key)
{
  key ^= key >> 33;
  key *= 0xff51afd7ed558ccdULL;
  key ^= key >> 33;
  return key;
}

/* The value of NAME=VALUE in ARGUMENTS (module_args: NAME=VALUE pairs
   separated by commas), copied into BUFFER of SIZE bytes; false when
   NAME is not there.  */
static inline bool
module_argument (const char *arguments, const char *name, char *buffer,
                 size_t size)
{
  size_t length = strlen (name);
  for (const char *p = arguments; *p;)
    {
      size_t field = strcspn (p, ",");
      if (field > length && strncmp (p, name, length) == 0 && p[length] == '=')
        {
          snprintf (buffer, size, "%.*s", (int) (field - length - 1),
                    p + length + 1);
          return true;
        }
      p += field + (p[field] == ',');
    }
  return false;
}

/* An instruction id as "function file:line:column" ("-" for 0).  */
static inline void
module_print_site (FILE *out, uint64_t id)
{
  const struct memprof_site *site = memprof_site_of (id);
  if (site == NULL)
    fputs ("-", out);
  else
    fprintf (out, "%s %s:%u:%u", site->function, site->file, site->line,
             site->column);
}

/* An open-addressing table of TYPE whose field KEY (a uint64_t, 0 for an
   empty slot) identifies an entry: NAME_slot (the entry of a key, or the
   empty slot where it goes), NAME_remove (linear probing's deletion: the
   entries after it move back, no tombstones) and NAME_reserve (room for
   one more of USED entries: the table doubles at half full, from 1024
   slots).  */
#define MODULE_TABLE(name, type, key)                                          \
  __attribute__ ((unused)) static type *name##_slot (                          \
      type *table, size_t capacity, uint64_t wanted)                           \
  {                                                                            \
    size_t i = module_hash (wanted) & (capacity - 1);                          \
    while (table[i].key != 0 && table[i].key != wanted)                        \
      i = (i + 1) & (capacity - 1);                                            \
    return &table[i];                                                          \
  }                                                                            \
  __attribute__ ((unused)) static void name##_remove (                         \
      type *table, size_t capacity, type *slot)                                \
  {                                                                            \
    size_t i = (size_t) (slot - table);                                        \
    slot->key = 0;                                                             \
    for (i = (i + 1) & (capacity - 1); table[i].key != 0;                      \
         i = (i + 1) & (capacity - 1))                                         \
      {                                                                        \
        type moved = table[i];                                                 \
        table[i].key = 0;                                                      \
        *name##_slot (table, capacity, moved.key) = moved;                     \
      }                                                                        \
  }                                                                            \
  __attribute__ ((unused)) static bool name##_reserve (                        \
      type **table, size_t *capacity, size_t used)                             \
  {                                                                            \
    size_t fresh_capacity = *capacity ? *capacity * 2 : 1024;                  \
    if ((used + 1) * 2 <= *capacity)                                           \
      return true;                                                             \
    type *fresh = calloc (fresh_capacity, sizeof *fresh);                      \
    if (fresh == NULL)                                                         \
      {                                                                        \
        module_out_of_memory = 1;                                              \
        return *capacity != 0 && used < *capacity - 1;                         \
      }                                                                        \
    for (size_t i = 0; i < *capacity; i++)                                     \
      if ((*table)[i].key != 0)                                                \
        *name##_slot (fresh, fresh_capacity, (*table)[i].key) = (*table)[i];   \
    free (*table);                                                             \
    *table = fresh;                                                            \
    *capacity = fresh_capacity;                                                \
    return true;                                                               \
  }

/* The tables' last words: the note that some events were left out.  */
static inline void
module_print_notes (FILE *out)
{
  if (module_out_of_memory)
    fprintf (out, "table\tnotes\nnote\nout of memory: some events were "
                  "left out\n");
}

#endif /* MEMPROF_MODULES_COMMON_H */
