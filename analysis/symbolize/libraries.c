/* The shared libraries a program loads, found as the dynamic linker would
   find them: its DT_NEEDED entries, searched in its DT_RUNPATH (or
   DT_RPATH; $ORIGIN expanded), then in the system's directories, and the
   libraries those need in turn.  The analysis symbolizes the frames of
   the C library and others with them, so that their frames have names
   without a --binary for each.  */

#include "libraries.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

/* Where Debian's dynamic linker looks after a program's own paths.  */
static const char *const system_directories[] = { "/lib/x86_64-linux-gnu",
                                                  "/usr/lib/x86_64-linux-gnu",
                                                  "/lib64",
                                                  "/usr/lib64",
                                                  "/lib",
                                                  "/usr/lib",
                                                  "/usr/local/lib" };

/* The most libraries followed (a guard against loops of odd links).  */
#define MAX_LIBRARIES 256

struct needs
{
  char **names; /* DT_NEEDED */
  size_t count;
  char *runpath; /* ':'-separated, $ORIGIN expanded, or NULL */
};

static void
free_needs (struct needs *needs)
{
  for (size_t i = 0; i < needs->count; i++)
    free (needs->names[i]);
  free (needs->names);
  free (needs->runpath);
}

/* Expand $ORIGIN (and ${ORIGIN}) in PATHS with the directory of FILE.  */
static char *
expand_origin (const char *paths, const char *file)
{
  char *directory = xstrdup (file);
  char *slash = strrchr (directory, '/');
  if (slash != NULL)
    *slash = '\0';
  else
    strcpy (directory, ".");
  struct buffer out = { 0 };
  for (const char *p = paths; *p;)
    {
      if (strncmp (p, "$ORIGIN", 7) == 0)
        {
          buffer_append (&out, directory, strlen (directory));
          p += 7;
        }
      else if (strncmp (p, "${ORIGIN}", 9) == 0)
        {
          buffer_append (&out, directory, strlen (directory));
          p += 9;
        }
      else
        buffer_append (&out, p++, 1);
    }
  free (directory);
  return out.data ? out.data : xstrdup ("");
}

/* Read the dynamic section of the ELF file at PATH.  Returns false when it
   cannot be read or has none.  */
static bool
read_needs (const char *path, struct needs *needs)
{
  memset (needs, 0, sizeof *needs);
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  elf_version (EV_CURRENT);
  Elf *elf = elf_begin (fd, ELF_C_READ, NULL);
  bool found = false;
  Elf_Scn *section = NULL;
  while (elf != NULL && (section = elf_nextscn (elf, section)) != NULL)
    {
      GElf_Shdr header;
      if (gelf_getshdr (section, &header) == NULL
          || header.sh_type != SHT_DYNAMIC)
        continue;
      Elf_Data *data = elf_getdata (section, NULL);
      if (data == NULL || header.sh_entsize == 0)
        continue;
      found = true;
      size_t entries = header.sh_size / header.sh_entsize;
      for (size_t i = 0; i < entries; i++)
        {
          GElf_Dyn entry;
          if (gelf_getdyn (data, (int) i, &entry) == NULL)
            break;
          const char *text = NULL;
          if (entry.d_tag == DT_NEEDED || entry.d_tag == DT_RUNPATH
              || entry.d_tag == DT_RPATH)
            text = elf_strptr (elf, header.sh_link, entry.d_un.d_val);
          if (text == NULL)
            continue;
          if (entry.d_tag == DT_NEEDED)
            {
              needs->names = xrealloc (
                  needs->names, (needs->count + 1) * sizeof *needs->names);
              needs->names[needs->count++] = xstrdup (text);
            }
          else if (needs->runpath == NULL || entry.d_tag == DT_RUNPATH)
            {
              /* DT_RUNPATH wins over DT_RPATH, as in the dynamic linker.  */
              free (needs->runpath);
              needs->runpath = expand_origin (text, path);
            }
        }
    }
  if (elf != NULL)
    elf_end (elf);
  close (fd);
  return found;
}

/* The file NAME names, searched in RUNPATH then the system directories;
   NULL when not found.  */
static char *
find_library (const char *name, const char *runpath)
{
  if (strchr (name, '/') != NULL)
    return access (name, R_OK) == 0 ? xstrdup (name) : NULL;
  if (runpath != NULL)
    {
      char *paths = xstrdup (runpath), *save = NULL;
      for (char *dir = strtok_r (paths, ":", &save); dir != NULL;
           dir = strtok_r (NULL, ":", &save))
        {
          char *candidate = xasprintf ("%s/%s", dir, name);
          if (access (candidate, R_OK) == 0)
            {
              free (paths);
              return candidate;
            }
          free (candidate);
        }
      free (paths);
    }
  for (size_t i = 0; i < sizeof system_directories / sizeof *system_directories;
       i++)
    {
      char *candidate = xasprintf ("%s/%s", system_directories[i], name);
      if (access (candidate, R_OK) == 0)
        return candidate;
      free (candidate);
    }
  return NULL;
}

size_t
libraries_of (const char *program, char ***paths)
{
  char **found = NULL;
  size_t count = 0;
  /* Breadth first: the program's needs, then theirs.  */
  const char *next = program;
  for (size_t visited = 0;; visited++)
    {
      struct needs needs;
      if (read_needs (next, &needs))
        for (size_t i = 0; i < needs.count && count < MAX_LIBRARIES; i++)
          {
            char *path = find_library (needs.names[i], needs.runpath);
            if (path == NULL)
              continue;
            bool known = strcmp (path, program) == 0;
            for (size_t j = 0; j < count && !known; j++)
              known = strcmp (found[j], path) == 0;
            if (known)
              {
                free (path);
                continue;
              }
            found = xrealloc (found, (count + 1) * sizeof *found);
            found[count++] = path;
          }
      free_needs (&needs);
      if (visited >= count)
        break;
      next = found[visited];
    }
  *paths = found;
  return count;
}
