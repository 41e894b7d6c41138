/* Fuzz target: the symbolizer on a binary that is not what it claims.
   The input is written to a scratch file and opened with symbolizer_open
   as the program's binary; elfutils parses it, and our code must not
   crash on whatever that gives back.  When it opens, symbolizer_lookup
   looks up addresses taken from the input itself (the entry point, the
   symbols and the executable segments, as libelf reads them), so that
   lookups land in the units and routines it describes; every frame's
   strings are read.  When it does not open, the message must say why.
   Seeds: corpus/elf, a small binary with DWARF and a stripped one.  */

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>

#include "fuzz.h"
#include "symbolize.h"

/* At most this many lookups per input: each may index a unit.  */
#define MAX_ADDRESSES 128
#define MAX_FRAMES 8

struct addresses
{
  uint64_t items[MAX_ADDRESSES];
  size_t count;
};

static void
add_address (struct addresses *list, uint64_t address)
{
  if (list->count < MAX_ADDRESSES)
    list->items[list->count++] = address;
}

/* Addresses worth looking up in the ELF file of SIZE bytes at DATA.  */
static void
collect_addresses (const uint8_t *data, size_t size, struct addresses *list)
{
  char *copy = malloc (size ? size : 1);
  memcpy (copy, data, size);
  Elf *elf = elf_memory (copy, size);
  GElf_Ehdr header;
  if (elf != NULL && gelf_getehdr (elf, &header) != NULL)
    {
      add_address (list, header.e_entry);
      size_t segments = 0;
      if (elf_getphdrnum (elf, &segments) == 0)
        for (size_t i = 0; i < segments; i++)
          {
            GElf_Phdr segment;
            if (gelf_getphdr (elf, i, &segment) != NULL
                && segment.p_type == PT_LOAD && (segment.p_flags & PF_X))
              {
                add_address (list, segment.p_vaddr);
                add_address (list, segment.p_vaddr + segment.p_memsz / 2);
                add_address (list, segment.p_vaddr + segment.p_memsz - 1);
              }
          }
      for (Elf_Scn *section = elf_nextscn (elf, NULL); section != NULL;
           section = elf_nextscn (elf, section))
        {
          GElf_Shdr section_header;
          Elf_Data *symbols;
          if (gelf_getshdr (section, &section_header) == NULL
              || (section_header.sh_type != SHT_SYMTAB
                  && section_header.sh_type != SHT_DYNSYM)
              || section_header.sh_entsize == 0
              || (symbols = elf_getdata (section, NULL)) == NULL)
            continue;
          size_t count = symbols->d_size / section_header.sh_entsize;
          for (size_t i = 0; i < count && list->count < MAX_ADDRESSES; i++)
            {
              GElf_Sym symbol;
              if (gelf_getsym (symbols, (int) i, &symbol) != NULL
                  && GELF_ST_TYPE (symbol.st_info) == STT_FUNC)
                {
                  add_address (list, symbol.st_value);
                  if (symbol.st_size > 1)
                    add_address (list, symbol.st_value + symbol.st_size / 2);
                }
            }
        }
    }
  if (elf != NULL)
    elf_end (elf);
  free (copy);
  add_address (list, 0);
  add_address (list, UINT64_MAX);
}

static void
write_input (const char *path, const uint8_t *data, size_t size)
{
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0)
    fuzz_fail ("cannot create %s", path);
  for (size_t done = 0; done < size;)
    {
      ssize_t written = write (fd, data + done, size - done);
      if (written <= 0)
        fuzz_fail ("cannot write %s", path);
      done += (size_t) written;
    }
  close (fd);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static bool started;
  if (!started)
    {
      /* Never ask a debuginfod server for the debug files of a random
         build id.  */
      unsetenv ("DEBUGINFOD_URLS");
      elf_version (EV_CURRENT);
      started = true;
    }
  const char *path = fuzz_scratch_file ("binary");
  char error[512];
  write_input (path, data, size);
  error[0] = '\0';
  struct symbolizer *symbolizer = symbolizer_open (path, error, sizeof error);
  if (symbolizer == NULL)
    {
      fuzz_check_error (error, path);
      return 0;
    }

  size_t build_id_size;
  const uint8_t *build_id = symbolizer_build_id (symbolizer, &build_id_size);
  char hex[2 * 64 + 1];
  if (build_id_size == 0 || build_id_size > 64)
    fuzz_fail ("a build id of %zu bytes", build_id_size);
  symbolize_hex (build_id, build_id_size, hex);
  symbolizer_has_dwarf (symbolizer);

  struct addresses list = { .count = 0 };
  collect_addresses (data, size, &list);
  volatile size_t sum = 0;
  for (size_t i = 0; i < list.count; i++)
    for (int max = 1; max <= MAX_FRAMES; max += MAX_FRAMES - 1)
      {
        struct symbol_frame frames[MAX_FRAMES];
        int count = symbolizer_lookup (symbolizer, list.items[i], frames, max);
        if (count < 0 || count > max)
          fuzz_fail ("lookup of 0x%llx gave %d frames of at most %d",
                     (unsigned long long) list.items[i], count, max);
        for (int j = 0; j < count; j++)
          {
            if (frames[j].function == NULL || frames[j].file == NULL)
              fuzz_fail ("lookup of 0x%llx: frame %d has a NULL string",
                         (unsigned long long) list.items[i], j);
            sum += strlen (frames[j].function) + strlen (frames[j].file)
                   + frames[j].line + frames[j].column;
          }
        symbolize_llvm_drops (frames, count);
      }
  (void) sum;
  symbolizer_close (symbolizer);
  return 0;
}
