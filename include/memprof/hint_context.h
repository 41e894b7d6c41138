/* Context-classified allocation calls: the contract between profile
   feedback (gcc-plugin/context_hints.cc), which writes the tables, and
   libmemprof_hint (runtime/hint/context.c), which reads them.  Both
   sides include this header; change it only together with
   MEMPROF_CONTEXT_VERSION.  docs/feedback.md ("Context hints") is the
   user's side.

   An allocation call whose profile contexts disagree (some cold, some
   hot or not cold) becomes a call of __memprof_hint_context_NAME, with a
   pointer to the call's context table as the last argument.  At run time
   the entry point walks frame pointers up the table's depth of caller
   frames, turns each return address into a frame key and picks the
   first entry whose keys match: its class decides the arena.  Contexts
   that match no entry (not cold, stale, or never profiled) are allocated
   as the unhinted function would.

   A frame key is a 64-bit hash the plugin computes from a call site's
   frames as the profile names them (function GUID, line offset and
   column of each frame of the call's inline chain).  Each return address
   gets its key from the unit that holds the call: the plugin puts a
   label after each call whose key some profile context has at a caller
   position and lists (label, key) in an ELF note of the object, which
   the library reads from every loaded object's PT_NOTE segments at first
   use (dl_iterate_phdr).  So the table needs no relocation, units need
   not know each other, and calls through function pointers are told
   apart like direct ones.  */

#ifndef MEMPROF_HINT_CONTEXT_H
#define MEMPROF_HINT_CONTEXT_H

#include <stdint.h>

#define MEMPROF_CONTEXT_VERSION 1

/* The table of one call, an array of 64-bit words:

     [0] MEMPROF_CONTEXT_MAGIC << 32 | MEMPROF_CONTEXT_VERSION
     [1] depth (caller frames compared, 1..MEMPROF_CONTEXT_MAX_DEPTH)
         | entry count << 32
     [2] the call's description (const char *: "file:line function")
     [3..5] calls classified default, cold and hot, and [6..8] their
         bytes (counted only with MEMPROF_HINT_STATS=1), written by the
         library
     [9] the next table used (the library's list, for the statistics)
     then per entry: its hint byte (MEMPROF_HINT_COLD or _HOT), and
     DEPTH frame keys, the first caller first.  A key of 0 matches any
     frame (the profile's context ended before that depth), and so does
     a frame the library cannot name (code built without these notes,
     or the walk's end), but an entry with keys matches only if one of
     them names a frame.  Entries are ordered most specific first: the
     first match wins.  */
#define MEMPROF_CONTEXT_MAGIC 0x4d50435aULL /* "MPCZ" */
#define MEMPROF_CONTEXT_MAX_DEPTH 12
#define MEMPROF_CONTEXT_HEADER_WORDS 10
#define MEMPROF_CONTEXT_WORD_HEADER 0
#define MEMPROF_CONTEXT_WORD_SHAPE 1
#define MEMPROF_CONTEXT_WORD_NAME 2
#define MEMPROF_CONTEXT_WORD_CALLS 3
#define MEMPROF_CONTEXT_WORD_BYTES 6
#define MEMPROF_CONTEXT_WORD_NEXT 9

/* The ELF note that names the return addresses of an object: owner
   "memprof", type MEMPROF_CONTEXT_NOTE_TYPE, section
   MEMPROF_CONTEXT_NOTE_SECTION; its descriptor is a sequence of
   records of three 32-bit words: the return address as an offset from
   the record's own address (signed), then the frame key, low word
   first.  */
#define MEMPROF_CONTEXT_NOTE_OWNER "memprof"
#define MEMPROF_CONTEXT_NOTE_TYPE 0x4d50u
#define MEMPROF_CONTEXT_NOTE_SECTION ".note.memprof.sites"

/* A 64-bit mix (MurmurHash3's finalizer): the plugin's frame keys hash
   with it (the library's cache of decisions takes the top bits of its
   walk's product instead, with no finalizer).  */
static inline uint64_t
memprof_context_mix (uint64_t value)
{
  value ^= value >> 33;
  value *= 0xff51afd7ed558ccdULL;
  value ^= value >> 33;
  value *= 0xc4ceb9fe1a85ec53ULL;
  return value ^ (value >> 33);
}

/* The entry points (libmemprof_hint): the unhinted function's
   arguments, then the call's table.  Memory from them is freed by the
   program's free, as from the functions of hint.h.  */
#ifndef __cplusplus
#include <stddef.h>

void *__memprof_hint_context_malloc (size_t size, uint64_t *table);
void *__memprof_hint_context_calloc (size_t count, size_t size,
                                     uint64_t *table);
void *__memprof_hint_context_realloc (void *pointer, size_t size,
                                      uint64_t *table);
void *__memprof_hint_context_aligned_alloc (size_t alignment, size_t size,
                                            uint64_t *table);
int __memprof_hint_context_posix_memalign (void **result, size_t alignment,
                                           size_t size, uint64_t *table);
void *__memprof_hint_context_memalign (size_t alignment, size_t size,
                                       uint64_t *table);
char *__memprof_hint_context_strdup (const char *string, uint64_t *table);
char *__memprof_hint_context_strndup (const char *string, size_t limit,
                                      uint64_t *table);
#endif

#endif /* MEMPROF_HINT_CONTEXT_H */
