/* What the example modules (dependences.c, lifetime.c) share: their
   argument syntax and how they print an instruction id; the hash table
   and the shadow memory are <memprof/module_kit.h>'s.
   A module of your own may include it too (docs/modules.md); everything
   here is static: no link-time name of its own.  */

#ifndef MEMPROF_MODULES_COMMON_H
#define MEMPROF_MODULES_COMMON_H

#include <memprof/module.h>
#include <memprof/module_kit.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The tables' last words: the note that some events were left out.  */
static inline void
module_print_notes (FILE *out)
{
  if (memprof_out_of_memory)
    fprintf (out, "table\tnotes\nnote\nout of memory: some events were "
                  "left out\n");
}

#endif /* MEMPROF_MODULES_COMMON_H */
