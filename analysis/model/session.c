/* Loading and symbolizing for every subcommand: see session.h.  */

#include "session.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "datasymbols.h"
#include "libraries.h"
#include "origin.h"
#include "patterns.h"
#include "symbolize.h"
#include "util.h"

/* The most frames one address expands to (its inline chain).  */
#define MAX_INLINE_FRAMES 64

void
session_init (struct session *session)
{
  memset (session, 0, sizeof *session);
  profile_init (&session->profile);
}

void
session_free (struct session *session)
{
  for (size_t i = 0; i < session->demangled_count; i++)
    free (session->demangled[i]);
  free (session->demangled);
  free (session->binaries);
  patterns_free (&session->patterns);
  profile_free (&session->profile);
}

bool
session_option (struct session *session, int argc, char **argv, int *index)
{
  const char *arg = argv[*index];
  const char *value = NULL;
  if (strncmp (arg, "--binary=", 9) == 0)
    value = arg + 9;
  else if (strcmp (arg, "--no-libraries") == 0)
    {
      session->no_libraries = true;
      return true;
    }
  else if (strcmp (arg, "--include-system") == 0)
    {
      session->include_system = true;
      return true;
    }
  else if (patterns_option (&session->patterns, argc, argv, index))
    return true;
  else if (strcmp (arg, "--binary") == 0)
    {
      if (*index + 1 >= argc)
        die (EXIT_BAD_INPUT, "--binary needs a file name");
      value = argv[++*index];
    }
  else
    return false;
  session->binaries
      = xrealloc (session->binaries,
                  (session->binary_count + 1) * sizeof *session->binaries);
  session->binaries[session->binary_count++] = value;
  return true;
}

static double
seconds_now (void)
{
  struct timespec now;
  clock_gettime (CLOCK_MONOTONIC, &now);
  return now.tv_sec + now.tv_nsec / 1e9;
}

void
session_load (struct session *session, char **paths, int count, bool progress)
{
  char error[1024];
  double start = seconds_now (), shown = 0;
  bool terminal = progress && isatty (STDERR_FILENO);
  for (int i = 0; i < count; i++)
    {
      if (profile_load (&session->profile, paths[i], error, sizeof error) != 0)
        {
          if (shown > 0)
            fputc ('\n', stderr);
          die (EXIT_BAD_INPUT, "%s", error);
        }
      double now = seconds_now ();
      if (terminal && now - start > 1 && (now - shown > 0.25 || i + 1 == count))
        {
          fprintf (stderr,
                   "\rmemprof: read %d of %d files, %zu contexts "
                   "(%.0f s)",
                   i + 1, count, session->profile.context_count, now - start);
          shown = now;
        }
    }
  if (shown > 0)
    fputc ('\n', stderr);
}

static void
hex_of_module (const struct profile *profile, uint32_t module, char *out)
{
  if (module == PROFILE_NO_MODULE)
    strcpy (out, "<none>");
  else if (profile->modules[module].build_id_size == 0)
    strcpy (out, "<none>");
  else
    symbolize_hex (profile->modules[module].build_id,
                   profile->modules[module].build_id_size, out);
}

/* Symbolize the locations of MODULE with SYMBOLIZER.  */
static void
symbolize_module (struct profile *profile, uint32_t module,
                  struct symbolizer *symbolizer)
{
  struct symbol_frame found[MAX_INLINE_FRAMES];
  struct profile_frame frames[MAX_INLINE_FRAMES];
  for (size_t i = 0; i < profile->location_count; i++)
    {
      if (profile->locations[i].module != module
          || profile->locations[i].frame_count != 0)
        continue;
      int count = symbolizer_lookup (symbolizer, profile->locations[i].address,
                                     found, MAX_INLINE_FRAMES);
      for (int j = 0; j < count; j++)
        {
          struct profile_frame *frame = &frames[j];
          frame->function = profile_intern (profile, found[j].function);
          frame->file = profile_intern (profile, found[j].file);
          frame->line = found[j].line;
          frame->column = found[j].column;
          frame->decl_line = found[j].decl_line;
          frame->flags = j + 1 < count ? PROFILE_FRAME_INLINED : 0;
          if (found[j].from_symbol_table)
            frame->flags |= PROFILE_FRAME_NO_DEBUG_INFO;
          frame->guid = profile_guid (found[j].function);
        }
      if (count > 0)
        profile_set_frames (profile, (uint32_t) i, frames, (uint32_t) count);
    }
}

bool
session_symbolize_with (struct session *session, const char *path,
                        bool required)
{
  struct profile *profile = &session->profile;
  char error[1024];
  struct symbolizer *symbolizer = symbolizer_open (path, error, sizeof error);
  if (symbolizer == NULL)
    die (EXIT_BAD_INPUT, "%s", error);
  size_t size;
  const uint8_t *id = symbolizer_build_id (symbolizer, &size);
  uint32_t module = PROFILE_NO_MODULE;
  for (size_t m = 0; m < profile->module_count; m++)
    if (profile->modules[m].build_id_size == size
        && memcmp (profile->modules[m].build_id, id, size) == 0)
      module = (uint32_t) m;
  if (module == PROFILE_NO_MODULE)
    {
      char binary_hex[2 * MEMPROF_RAW_BUILD_ID_MAX + 1];
      char profile_hex[2 * MEMPROF_RAW_BUILD_ID_MAX + 1];
      symbolize_hex (id, size, binary_hex);
      hex_of_module (profile, profile->main_module, profile_hex);
      symbolizer_close (symbolizer);
      if (!required)
        return false;
      die (EXIT_BAD_INPUT,
           "%s: build id %s does not match the profile: it was made by a "
           "program with build id %s (rebuilding changes the build id: give "
           "the binary that made the profile)",
           path, binary_hex, profile_hex);
    }
  profile->modules[module].path = profile_intern (profile, path);
  symbolize_module (profile, module, symbolizer);
  symbolizer_close (symbolizer);
  /* The program's global variables, when its profiles counted them.  */
  if (profile_symbolize_globals (profile, module, path, error, sizeof error)
      < 0)
    warn ("warning: %s: its globals are not symbolized: %s", path, error);
  return true;
}

void
session_symbolize_libraries (struct session *session, const char *program)
{
  if (session->no_libraries)
    return;
  char **paths;
  size_t count = libraries_of (program, &paths);
  for (size_t i = 0; i < count; i++)
    {
      /* A library of this machine that the profile's run did not load
         (or loaded in another version) is simply not used.  */
      session_symbolize_with (session, paths[i], false);
      free (paths[i]);
    }
  free (paths);
}

void
session_symbolize (struct session *session)
{
  for (size_t b = 0; b < session->binary_count; b++)
    session_symbolize_with (session, session->binaries[b], true);
  for (size_t b = 0; b < session->binary_count; b++)
    session_symbolize_libraries (session, session->binaries[b]);
  origin_mark (&session->profile, session_location_is_runtime);
  patterns_apply (&session->patterns, session);
}

void
session_symbolize_sides (struct session *sides, size_t count,
                         const struct session *binaries)
{
  for (size_t b = 0; b < binaries->binary_count; b++)
    {
      bool used = false;
      for (size_t side = 0; side < count; side++)
        used |= session_symbolize_with (&sides[side], binaries->binaries[b],
                                        false);
      if (!used)
        /* No side: say so with the build ids of the first.  */
        session_symbolize_with (&sides[0], binaries->binaries[b], true);
    }
  for (size_t b = 0; b < binaries->binary_count; b++)
    for (size_t side = 0; side < count; side++)
      {
        sides[side].no_libraries = binaries->no_libraries;
        session_symbolize_libraries (&sides[side], binaries->binaries[b]);
      }
}

const char *
session_demangled (struct session *session, uint32_t index)
{
  struct profile *profile = &session->profile;
  if (session->demangled_count < profile->string_count)
    {
      session->demangled
          = xrealloc (session->demangled,
                      profile->string_count * sizeof *session->demangled);
      for (size_t i = session->demangled_count; i < profile->string_count; i++)
        session->demangled[i] = NULL;
      session->demangled_count = profile->string_count;
    }
  if (session->demangled[index] == NULL)
    session->demangled[index]
        = symbolize_demangle (profile_string (profile, index));
  return session->demangled[index];
}

/* Is NAME one of the allocation entry points a runtime interposes (clang's
   runtime calls its own __interceptor_malloc...)?  */
static bool
is_allocation_entry_point (const char *name)
{
  static const char *const names[]
      = { "malloc", "calloc",   "realloc",        "reallocarray",
          "free",   "memalign", "posix_memalign", "aligned_alloc",
          "valloc", "pvalloc",  "strdup",         "strndup" };
  while (*name == '_')
    name++;
  if (strncmp (name, "interceptor_", 12) == 0)
    return true;
  /* operator new and new[], all of their overloads (mangled).  */
  if (strncmp (name, "Znwm", 4) == 0 || strncmp (name, "Znam", 4) == 0)
    return true;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp (name, names[i]) == 0)
      return true;
  return false;
}

bool
session_location_is_runtime (const struct profile *profile, uint32_t location,
                             bool leaf)
{
  const struct profile_location *where = &profile->locations[location];
  if (where->frame_count == 0)
    return false;
  const struct profile_frame *first = &profile->frames[where->first_frame];
  return profile_is_llvm_runtime_file (profile_string (profile, first->file))
         || (leaf && (first->flags & PROFILE_FRAME_NO_DEBUG_INFO)
             && is_allocation_entry_point (
                 profile_string (profile, first->function)));
}

size_t
session_site (const struct view_frame *frames, size_t count)
{
  for (size_t i = 0; i < count; i++)
    if (frames[i].user)
      return i;
  return 0;
}

size_t
session_frames (struct session *session, const struct profile_context *context,
                bool llvm_only, struct view_frame **frames, size_t *capacity)
{
  struct profile *profile = &session->profile;
  const uint32_t *locations = profile_context_locations (profile, context);
  size_t count = 0;
  for (uint32_t i = 0; i < context->location_count; i++)
    {
      const struct profile_location *location
          = &profile->locations[locations[i]];
      const struct profile_frame *first
          = location->frame_count ? &profile->frames[location->first_frame]
                                  : NULL;
      /* The frames of LLVM's runtime (clang's profiles) are never
         anyone's allocation site: its source files, and, at the top of
         the stack, its entry points built without debug information.  */
      if (session_location_is_runtime (profile, locations[i], count == 0))
        continue;
      bool user_module = origin_module_is_user (profile, location->module);
      if (llvm_only && !profile_location_is_llvm_frame (profile, locations[i]))
        continue;
      uint32_t n = location->frame_count ? location->frame_count : 1;
      if (count + n > *capacity)
        {
          *capacity = (count + n) * 2;
          *frames = xrealloc (*frames, *capacity * sizeof **frames);
        }
      for (uint32_t j = 0; j < n; j++)
        {
          struct view_frame *view = &(*frames)[count++];
          memset (view, 0, sizeof *view);
          view->address = location->address;
          view->file = "";
          view->user = user_module;
          if (first == NULL)
            {
              /* Unsymbolized: its address, in its module if it has one
                 (named by its file when known, else by the start of its
                 build id).  */
              char name[96];
              const char *module_file
                  = origin_module_file_name (profile, location->module);
              if (location->module == PROFILE_NO_MODULE
                  && location->address == MEMPROF_RAW_FOLD_PC)
                snprintf (name, sizeof name, "[recursion folded]");
              else if (location->module == PROFILE_NO_MODULE)
                snprintf (name, sizeof name, "0x%llx",
                          (unsigned long long) location->address);
              else if (module_file != NULL)
                snprintf (name, sizeof name, "%s+0x%llx", module_file,
                          (unsigned long long) location->address);
              else
                {
                  char hex[2 * MEMPROF_RAW_BUILD_ID_MAX + 1];
                  hex_of_module (profile, location->module, hex);
                  hex[8] = '\0';
                  snprintf (name, sizeof name, "[%s]+0x%llx", hex,
                            (unsigned long long) location->address);
                }
              view->name
                  = profile_string (profile, profile_intern (profile, name));
              continue;
            }
          const struct profile_frame *frame = &first[j];
          view->function = profile_string (profile, frame->function);
          view->name = session_demangled (session, frame->function);
          view->file = profile_string (profile, frame->file);
          view->line = frame->line;
          view->column = frame->column;
          view->line_offset = frame->line - frame->decl_line;
          view->inlined = frame->flags & PROFILE_FRAME_INLINED;
          view->debug_info = !(frame->flags & PROFILE_FRAME_NO_DEBUG_INFO);
          view->guid = frame->guid;
          view->user = user_module && !origin_file_is_system (view->file);
        }
    }
  return count;
}

char *
session_frame_text (const struct view_frame *frame, char *out, size_t size)
{
  if (frame->file[0] != '\0' && frame->column != 0)
    snprintf (out, size, "%s (%s:%u:%u)", frame->name, frame->file, frame->line,
              frame->column);
  else if (frame->file[0] != '\0')
    snprintf (out, size, "%s (%s:%u)", frame->name, frame->file, frame->line);
  else if (frame->debug_info && (frame->line_offset || frame->column))
    /* Frames from llvm-profdata's YAML: no file, lines as offsets.  */
    snprintf (out, size, "%s (+%u:%u)", frame->name, frame->line_offset,
              frame->column);
  else
    snprintf (out, size, "%s", frame->name);
  return out;
}

void
session_print_frames (struct session *session,
                      const struct profile_context *context, const char *indent,
                      size_t limit, bool mark_inlined)
{
  struct view_frame *frames = NULL;
  size_t capacity = 0;
  char line[1024];
  size_t n = session_frames (session, context, false, &frames, &capacity);
  size_t site = session_site (frames, n);
  if (site > 0)
    {
      /* The innermost folded function, its name cut short: C++ library
         names run over a screen.  */
      int length = (int) strcspn (frames[0].name, "(");
      printf ("%s[%zu system frame%s folded: %.*s%s]\n", indent, site,
              site == 1 ? "" : "s", length > 60 ? 57 : length, frames[0].name,
              length > 60 ? "... ..." : " ...");
    }
  size_t shown = limit == 0 || limit > n - site ? n - site : limit;
  for (size_t i = site; i < site + shown; i++)
    printf ("%s%s%s\n", indent,
            session_frame_text (&frames[i], line, sizeof line),
            mark_inlined && frames[i].inlined ? " [inlined]" : "");
  if (site + shown < n)
    printf ("%s... %zu more frame%s\n", indent, n - site - shown,
            n - site - shown == 1 ? "" : "s");
  free (frames);
}

char *
session_context_key (struct session *session,
                     const struct profile_context *context,
                     struct view_frame **frames, size_t *capacity)
{
  struct buffer key = { 0 };
  size_t n = session_frames (session, context, false, frames, capacity);
  for (size_t i = 0; i < n; i++)
    {
      const struct view_frame *frame = &(*frames)[i];
      if (frame->function != NULL)
        buffer_printf (&key, "%s:%u:%u%s;", frame->function, frame->line_offset,
                       frame->column, frame->inlined ? ":i" : "");
      else
        buffer_printf (&key, "%s;", frame->name);
    }
  return key.data ? key.data : xstrdup ("");
}
