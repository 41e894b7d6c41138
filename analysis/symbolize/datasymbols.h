/* The global and static variables of a binary, as its ELF symbol table
   names them, for attributing the accesses the runtime counts per granule
   of the program's data (globals.h).  */

#ifndef MEMPROF_ANALYSIS_DATASYMBOLS_H
#define MEMPROF_ANALYSIS_DATASYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct data_symbol
{
  const char *name;
  const char *file; /* a local symbol's source file (the STT_FILE symbol
                       before it), or NULL */
  bool local;
  uint64_t address; /* st_value: the binary's virtual address */
  uint64_t size;    /* st_size, not 0 */
};

/* Call ADD for every data symbol of the ELF file at PATH: the STT_OBJECT
   symbols of .symtab (of .dynsym when it was stripped) that have a size,
   are defined in a section, and lie in a PT_LOAD segment that is not
   executable: the memory the runtime scans (runtime/globals.c); but
   the runtime's __memprof_shadow_base, which the program holds by a copy
   relocation and no counted access reads.  The
   strings are valid during the call only.  Returns the number of
   symbols, or -1 with a message in ERROR.  */
long data_symbols_read (const char *path,
                        void (*add) (void *cookie,
                                     const struct data_symbol *symbol),
                        void *cookie, char *error, size_t error_size);

struct profile;

/* When PROFILE counted the accesses to globals of MODULE (its main
   module, or one that has granules), give MODULE the data symbols of the
   binary at PATH as its globals.  Returns how many, 0 when MODULE's
   globals were not counted, or -1 with a message in ERROR.  */
long profile_symbolize_globals (struct profile *profile, uint32_t module,
                                const char *path, char *error,
                                size_t error_size);

#endif /* MEMPROF_ANALYSIS_DATASYMBOLS_H */
