/* A binary's data symbols: see datasymbols.h.  */

#include "datasymbols.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "globals.h"
#include "memprof/abi.h"
#include "profile.h"

/* The program's segments the runtime scans: PT_LOAD, not executable.  */
#define DATA_SEGMENTS_MAX 16

struct range
{
  uint64_t low, high;
};

static bool
in_ranges (const struct range *ranges, size_t count, uint64_t address,
           uint64_t size)
{
  for (size_t i = 0; i < count; i++)
    if (address >= ranges[i].low && address < ranges[i].high
        && size <= ranges[i].high - address)
      return true;
  return false;
}

/* The symbol table to read: .symtab, else .dynsym.  */
static Elf_Scn *
symbol_table (Elf *elf, GElf_Shdr *header)
{
  Elf_Scn *dynamic = NULL, *section = NULL;
  GElf_Shdr dynamic_header;
  while ((section = elf_nextscn (elf, section)) != NULL)
    {
      GElf_Shdr candidate;
      if (gelf_getshdr (section, &candidate) == NULL)
        continue;
      if (candidate.sh_type == SHT_SYMTAB)
        {
          *header = candidate;
          return section;
        }
      if (candidate.sh_type == SHT_DYNSYM && dynamic == NULL)
        {
          dynamic = section;
          dynamic_header = candidate;
        }
    }
  if (dynamic != NULL)
    *header = dynamic_header;
  return dynamic;
}

long
data_symbols_read (const char *path,
                   void (*add) (void *cookie, const struct data_symbol *symbol),
                   void *cookie, char *error, size_t error_size)
{
  struct range ranges[DATA_SEGMENTS_MAX];
  size_t range_count = 0, phdr_count = 0;
  long found = 0;
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    {
      snprintf (error, error_size, "cannot open %s: %s", path,
                strerror (errno));
      return -1;
    }
  elf_version (EV_CURRENT);
  Elf *elf = elf_begin (fd, ELF_C_READ_MMAP, NULL);
  if (elf == NULL || elf_kind (elf) != ELF_K_ELF
      || elf_getphdrnum (elf, &phdr_count) != 0)
    {
      snprintf (error, error_size, "%s: not an ELF file with program headers",
                path);
      if (elf != NULL)
        elf_end (elf);
      close (fd);
      return -1;
    }
  for (size_t i = 0; i < phdr_count && range_count < DATA_SEGMENTS_MAX; i++)
    {
      GElf_Phdr phdr;
      if (gelf_getphdr (elf, (int) i, &phdr) == NULL || phdr.p_type != PT_LOAD
          || (phdr.p_flags & PF_X) || phdr.p_memsz == 0
          || phdr.p_vaddr + phdr.p_memsz < phdr.p_vaddr)
        continue;
      ranges[range_count++]
          = (struct range){ phdr.p_vaddr, phdr.p_vaddr + phdr.p_memsz };
    }

  GElf_Shdr header;
  Elf_Scn *section = symbol_table (elf, &header);
  Elf_Data *data = section ? elf_getdata (section, NULL) : NULL;
  size_t count = data != NULL && header.sh_entsize != 0
                     ? header.sh_size / header.sh_entsize
                     : 0;
  const char *file = NULL;
  for (size_t i = 1; i < count; i++)
    {
      GElf_Sym symbol;
      if (gelf_getsym (data, (int) i, &symbol) == NULL)
        continue;
      int type = GELF_ST_TYPE (symbol.st_info);
      bool local = GELF_ST_BIND (symbol.st_info) == STB_LOCAL;
      const char *name = elf_strptr (elf, header.sh_link, symbol.st_name);
      /* The local symbols of a unit follow its STT_FILE symbol.  */
      if (type == STT_FILE)
        {
          file = name != NULL && name[0] != '\0' ? name : NULL;
          continue;
        }
      if (!local)
        file = NULL;
      /* The runtime's shadow base, copied into the program by a copy
         relocation, is read by the instrumentation without being
         counted: it would only take a share of its neighbours'.  */
      if (type != STT_OBJECT || symbol.st_size == 0 || name == NULL
          || name[0] == '\0' || strcmp (name, MEMPROF_SHADOW_BASE_NAME) == 0
          || symbol.st_shndx == SHN_UNDEF || symbol.st_shndx >= SHN_LORESERVE
          || !in_ranges (ranges, range_count, symbol.st_value, symbol.st_size))
        continue;
      struct data_symbol data_symbol = {
        .name = name,
        .file = local ? file : NULL,
        .local = local,
        .address = symbol.st_value,
        .size = symbol.st_size,
      };
      add (cookie, &data_symbol);
      found++;
    }
  elf_end (elf);
  close (fd);
  return found;
}

struct symbolizing
{
  struct profile *profile;
  uint32_t module;
};

static void
add_global (void *cookie, const struct data_symbol *symbol)
{
  struct symbolizing *s = cookie;
  struct profile_global global = {
    .module = s->module,
    .name = profile_intern (s->profile, symbol->name),
    .file = symbol->file ? profile_intern (s->profile, symbol->file) : 0,
    .flags = symbol->local ? PROFILE_GLOBAL_LOCAL : 0,
    .address = symbol->address,
    .size = symbol->size,
  };
  profile_add_global (s->profile, &global);
}

long
profile_symbolize_globals (struct profile *profile, uint32_t module,
                           const char *path, char *error, size_t error_size)
{
  bool counted = profile->global_inputs > 0 && module == profile->main_module;
  for (size_t i = 0; i < profile->granule_count && !counted; i++)
    counted = profile->granules[i].module == module;
  if (!counted)
    return 0;
  struct symbolizing s = { profile, module };
  return data_symbols_read (path, add_global, &s, error, error_size);
}
