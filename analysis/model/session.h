/* What every subcommand does first: load its input files into one
   profile and symbolize it against the binaries given with --binary; and
   how it then walks a context's frames and reads its metrics.  */

#ifndef MEMPROF_ANALYSIS_SESSION_H
#define MEMPROF_ANALYSIS_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <regex.h>
#include <stdint.h>

#include "profile.h"

/* Contexts kept or dropped by the regular expressions of --focus,
   --ignore and --suppressions (origin.h).  */
struct session_patterns
{
  regex_t *focus, *ignore;
  size_t focus_count, ignore_count;
};

struct session
{
  struct profile profile;
  const char **binaries; /* from --binary */
  size_t binary_count;
  bool no_libraries;   /* --no-libraries */
  bool include_system; /* --include-system: findings of CONTEXT_FROM_SYSTEM */
  struct session_patterns patterns;
  char **demangled; /* per string, made on first use */
  size_t demangled_count;
};

void session_init (struct session *session);
void session_free (struct session *session);

/* Handle ARGV[*INDEX] if it is an option every subcommand that reads
   profiles takes (--binary FILE, --binary=FILE, --no-libraries,
   --include-system, --focus=REGEX, --ignore=REGEX, --suppressions=FILE);
   advance *INDEX past it.  Returns true when it was one.  */
bool session_option (struct session *session, int argc, char **argv,
                     int *index);

/* Load the COUNT files at PATHS, in turn (each is read, folded in and
   unmapped before the next).  With PROGRESS, a line on stderr tells how
   far it got, when stderr is a terminal and the work takes over a second.
   Bad input: a message naming the file and byte, exit status 2.  */
void session_load (struct session *session, char **paths, int count,
                   bool progress);

/* Symbolize every location of the modules the --binary files are, with
   their DWARF, and then those of the shared libraries they load, found
   as the dynamic linker finds them, when their build ids are modules of
   the profile (unless --no-libraries).  A binary whose build id is no
   module of the profile: a message with both build ids, exit status 2.
   Then mark each context's origin (origin.h) and keep only the contexts
   that --focus, --ignore and --suppressions let through (patterns.h).  */
void session_symbolize (struct session *session);

/* The libraries' part of that, for PROGRAM.  */
void session_symbolize_libraries (struct session *session, const char *program);

/* Symbolize with the binary at PATH when its build id is a module of the
   profile, and return true; otherwise, when REQUIRED, the message with
   both build ids and exit status 2, else false.  */
bool session_symbolize_with (struct session *session, const char *path,
                             bool required);

/* Symbolize each of COUNT sessions (the sides of a comparison) with the
   binaries of BINARIES (its --binary options), each binary the sides its
   build id belongs to; a binary of no side: the message with both build
   ids, exit status 2.  Then their libraries, unless --no-libraries.  */
void session_symbolize_sides (struct session *sides, size_t count,
                              const struct session *binaries);

/* The demangled name of string INDEX (a linkage name).  */
const char *session_demangled (struct session *session, uint32_t index);

/* One frame of a context, as the subcommands show it.  */
struct view_frame
{
  const char *function; /* linkage name; NULL when not symbolized */
  const char *name;     /* demangled; for an unsymbolized location,
                           "0x<address>" or "<module>+0x<address>" */
  const char *file;     /* "" when unknown */
  uint32_t line, column;
  uint32_t line_offset; /* line - the function's first line, as LLVM */
  bool inlined;         /* into the next frame */
  bool debug_info;      /* false: from the symbol table or unsymbolized */
  bool user;            /* in the user's own code (origin.h): a user's
                           module, not inlined from a system header */
  uint64_t guid;
  uint64_t address; /* of its location (module-relative) */
};

/* The frames of CONTEXT, leaf first, into *FRAMES (grown as needed; the
   caller frees it once).  The frames of LLVM's runtime (in clang's
   profiles) are left out, as llvm-profdata leaves them out; with
   LLVM_ONLY, so are the locations outside the program (the main module)
   and those not symbolized from debug information, to give exactly the
   frames llvm-profdata keeps.  Returns the count.  */
size_t session_frames (struct session *session,
                       const struct profile_context *context, bool llvm_only,
                       struct view_frame **frames, size_t *capacity);

/* Is LOCATION the profiler runtime's own (clang's runtime: its source
   files, or, as the stack's LEAF, its entry points without debug
   information)?  Such frames are never anyone's allocation site.  */
bool session_location_is_runtime (const struct profile *profile,
                                  uint32_t location, bool leaf);

/* The allocation site of a context whose COUNT frames are FRAMES: the
   index of its first frame in the user's code, or 0 when none is.  */
size_t session_site (const struct view_frame *frames, size_t count);
/* The key that matches CONTEXT across profiles (of two builds, say): its
   frames as session_frames gives them, symbolized ones by function, line
   offset from the function's first line and column, others by address.
   FRAMES and CAPACITY as session_frames'; the caller frees the key.  */
char *session_context_key (struct session *session,
                           const struct profile_context *context,
                           struct view_frame **frames, size_t *capacity);

/* "name (file:line:column)" of FRAME into OUT.  */
char *session_frame_text (const struct view_frame *frame, char *out,
                          size_t size);

/* Print CONTEXT's frames on stdout, one a line after INDENT, from its
   site (session_site; a line says how many system frames above it are
   folded): at most LIMIT (0: all), then how many more there are.  */
void session_print_frames (struct session *session,
                           const struct profile_context *context,
                           const char *indent, size_t limit, bool mark_inlined);

#endif /* MEMPROF_ANALYSIS_SESSION_H */
