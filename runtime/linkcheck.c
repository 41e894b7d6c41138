/* Whether llvm-profdata can symbolize the profiles of this program, said
   once, in one line, when the first profile is written.

   llvm-profdata (RawMemProfReader) finds the profiled binary's segment in
   the profile by its GNU build ID and accepts exactly one executable
   segment: a program linked without a build ID, or with its code split
   over several executable PT_LOAD segments (a linker script, sections
   placed on their own), gets "no matching executable segments" or
   "expect only one executable load segment" there.  The line names the
   flags that fix it.  Checked on the main program only: it is the one
   --profiled-binary names.  */

#define _GNU_SOURCE
#include "internal.h"

#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdatomic.h>

struct program_shape
{
  int executable_segments;
  bool build_id;
};

static bool
has_build_id (const struct dl_phdr_info *info, const ElfW (Phdr) * phdr)
{
  const char *note = (const char *) (info->dlpi_addr + phdr->p_vaddr);
  const char *end = note + phdr->p_memsz;
  while (note + sizeof (ElfW (Nhdr)) <= end)
    {
      const ElfW (Nhdr) *nhdr = (const ElfW (Nhdr) *) note;
      const char *name = note + sizeof *nhdr;
      const char *desc = name + ROUND_UP (nhdr->n_namesz, 4);
      if (nhdr->n_type == NT_GNU_BUILD_ID && nhdr->n_namesz == 4
          && nhdr->n_descsz > 0 && memcmp (name, "GNU", 4) == 0)
        return true;
      note = desc + ROUND_UP (nhdr->n_descsz, 4);
    }
  return false;
}

/* dl_iterate_phdr gives the main program first.  */
static int
shape_of_program (struct dl_phdr_info *info, size_t size, void *cookie)
{
  struct program_shape *shape = cookie;
  (void) size;
  for (int i = 0; i < info->dlpi_phnum; i++)
    {
      const ElfW (Phdr) *phdr = &info->dlpi_phdr[i];
      if (phdr->p_type == PT_LOAD && (phdr->p_flags & PF_X))
        shape->executable_segments++;
      else if (phdr->p_type == PT_NOTE && !shape->build_id)
        shape->build_id = has_build_id (info, phdr);
    }
  return 1;
}

/* See internal.h.  */
void
link_check (void)
{
  static atomic_bool checked;
  struct program_shape shape = { 0, false };

  if (atomic_exchange (&checked, true))
    return;
  dl_iterate_phdr (shape_of_program, &shape);
  if (!shape.build_id)
    log_printf ("%s has no GNU build ID: llvm-profdata cannot symbolize its "
                "profile (it matches the binary by build ID); link with "
                "-Wl,--build-id",
                program_invocation_name);
  else if (shape.executable_segments > 1)
    log_printf ("%s has %d executable segments: llvm-profdata cannot "
                "symbolize its profile (it reads one); link without what "
                "splits the code (a linker script, or "
                "-Wl,-z,noseparate-code)",
                program_invocation_name, shape.executable_segments);
}
