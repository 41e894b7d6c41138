/* The origin of allocations: see origin.h.  */

#include "origin.h"

#include <string.h>

/* The directories a system's libraries are installed in.  */
static const char *const system_library_directories[]
    = { "/lib/",       "/lib64/",     "/lib32/",      "/usr/lib/",
        "/usr/lib64/", "/usr/lib32/", "/usr/libexec/" };

/* The directories of system headers whose code is inlined into the
   user's: the C++ library's containers, GCC's own headers.  */
static const char *const system_header_directories[]
    = { "/usr/include/", "/usr/lib/gcc/", "/usr/local/include/c++/" };

/* The C library's functions that return memory allocated for their
   caller, which the caller then owns (frees, or leaks): an allocation
   under one of them is the user's, not the C library's own.  Names
   without their leading underscores and "GI_" prefixes.  */
static const char *const hands_memory_to_caller[] = { "getline",
                                                      "getdelim",
                                                      "asprintf",
                                                      "vasprintf",
                                                      "asprintf_chk",
                                                      "vasprintf_chk",
                                                      "open_memstream",
                                                      "realpath",
                                                      "canonicalize_file_name",
                                                      "getcwd",
                                                      "get_current_dir_name",
                                                      "scandir",
                                                      "scandir64",
                                                      "scandirat",
                                                      "tempnam",
                                                      "strdup",
                                                      "strndup",
                                                      "wcsdup",
                                                      "backtrace_symbols",
                                                      "glob",
                                                      "glob64",
                                                      "regcomp",
                                                      "getaddrinfo",
                                                      "fopen",
                                                      "fopen64",
                                                      "fdopen",
                                                      "popen",
                                                      "fmemopen",
                                                      "opendir",
                                                      "fdopendir",
                                                      "newlocale",
                                                      "iconv_open",
                                                      "open_wmemstream" };

static bool
starts_with (const char *text, const char *prefix)
{
  return strncmp (text, prefix, strlen (prefix)) == 0;
}

/* Does TEXT start with one of the COUNT PREFIXES?  */
static bool
starts_with_any (const char *text, const char *const *prefixes, size_t count)
{
  for (size_t i = 0; i < count; i++)
    if (starts_with (text, prefixes[i]))
      return true;
  return false;
}

const char *
origin_module_file_name (const struct profile *profile, uint32_t module)
{
  if (module == PROFILE_NO_MODULE || profile->modules[module].path == 0)
    return NULL;
  const char *path = profile_string (profile, profile->modules[module].path);
  const char *base = strrchr (path, '/');
  return base ? base + 1 : path;
}

bool
origin_module_is_user (const struct profile *profile, uint32_t module)
{
  if (module == PROFILE_NO_MODULE)
    return false;
  if (module == profile->main_module)
    return true;
  if (profile->modules[module].path == 0)
    return false;
  const char *path = profile_string (profile, profile->modules[module].path);
  return !starts_with_any (path, system_library_directories,
                           sizeof system_library_directories
                               / sizeof system_library_directories[0]);
}

bool
origin_file_is_system (const char *file)
{
  return starts_with_any (file, system_header_directories,
                          sizeof system_header_directories
                              / sizeof system_header_directories[0]);
}

/* Is MODULE the C library or the dynamic linker?  */
static bool
module_is_c_library (const struct profile *profile, uint32_t module)
{
  const char *name = origin_module_file_name (profile, module);
  return name != NULL
         && (starts_with (name, "libc.so") || starts_with (name, "libc-")
             || starts_with (name, "ld-linux"));
}

/* Does the C library function NAME return memory its caller owns?  */
static bool
hands_memory_to_caller_named (const char *name)
{
  for (;;)
    if (*name == '_')
      name++;
    else if (starts_with (name, "GI_"))
      name += 3;
    else
      break;
  for (size_t i = 0;
       i < sizeof hands_memory_to_caller / sizeof hands_memory_to_caller[0];
       i++)
    if (strcmp (name, hands_memory_to_caller[i]) == 0)
      return true;
  return false;
}

/* The origin flags of CONTEXT.  */
static uint32_t
origin_of (const struct profile *profile, const struct profile_context *context,
           bool (*is_runtime) (const struct profile *, uint32_t, bool))
{
  const uint32_t *locations = profile_context_locations (profile, context);
  uint32_t leaf = 0;
  if (profile->main_module == PROFILE_NO_MODULE)
    return 0; /* nothing tells the program from the rest */
  while (leaf < context->location_count
         && is_runtime (profile, locations[leaf], leaf == 0))
    leaf++;
  if (leaf == context->location_count)
    return 0;
  uint32_t first_user = leaf;
  while (first_user < context->location_count
         && !origin_module_is_user (
             profile, profile->locations[locations[first_user]].module))
    first_user++;
  if (first_user == leaf)
    return 0;
  if (first_user == context->location_count)
    return CONTEXT_FROM_SYSTEM | CONTEXT_UNCOUNTED_CALLER;
  /* Called by the user's code into a library: the C library's own
     buffers unless the function the user called hands the memory back.  */
  const struct profile_location *called
      = &profile->locations[locations[first_user - 1]];
  uint32_t flags = CONTEXT_UNCOUNTED_CALLER;
  if (module_is_c_library (profile, profile->locations[locations[leaf]].module)
      && module_is_c_library (profile, called->module)
      && called->frame_count > 0)
    {
      const struct profile_frame *outermost
          = &profile->frames[called->first_frame + called->frame_count - 1];
      if (!hands_memory_to_caller_named (
              profile_string (profile, outermost->function)))
        flags |= CONTEXT_FROM_SYSTEM;
    }
  return flags;
}

void
origin_mark (struct profile *profile,
             bool (*is_runtime) (const struct profile *, uint32_t, bool))
{
  for (size_t i = 0; i < profile->context_count; i++)
    profile->contexts[i].origin
        = origin_of (profile, &profile->contexts[i], is_runtime);
}
