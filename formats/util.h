/* What every part of the memprof command (and the profile readers the
   plugin compiles in) needs: allocation that never
   fails quietly, messages, files read whole and written atomically.  */

#ifndef MEMPROF_ANALYSIS_UTIL_H
#define MEMPROF_ANALYSIS_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exit statuses: 0 success, 1 a failure of this machine (out of memory, a
   write that failed), 2 bad input or bad usage.  */
enum
{
  EXIT_BAD_INPUT = 2
};

/* Out of memory: a message and exit status 1.  */
void *xmalloc (size_t size);
void *xcalloc (size_t count, size_t size);
void *xrealloc (void *old, size_t size);
char *xstrdup (const char *text);
/* printf into a new string.  */
char *xasprintf (const char *format, ...)
    __attribute__ ((format (printf, 1, 2)));

/* "memprof: MESSAGE" on stderr.  */
void warn (const char *format, ...) __attribute__ ((format (printf, 1, 2)));
/* "memprof: MESSAGE" on stderr and exit with STATUS.  */
void die (int status, const char *format, ...)
    __attribute__ ((noreturn, format (printf, 2, 3)));

/* A file mapped whole, read-only.  */
struct mapped_file
{
  const uint8_t *data;
  size_t size;
};

/* Map PATH; -1 with a message in ERROR when it cannot be opened or is not
   a regular file.  An empty file maps to size 0.  */
int map_file (const char *path, struct mapped_file *file, char *error,
              size_t error_size);
void unmap_file (struct mapped_file *file);

/* Write SIZE bytes at DATA to PATH: to a temporary file in the same
   directory first, renamed into place when complete, so that PATH never
   holds half a file; "-" is stdout; a device or FIFO (/dev/null) is
   written in place, never replaced.  -1 with a message in ERROR.  */
int write_file_atomically (const char *path, const void *data, size_t size,
                           char *error, size_t error_size);

/* A string that grows.  */
struct buffer
{
  char *data;
  size_t length, capacity;
};
void buffer_append (struct buffer *buffer, const void *data, size_t size);
void buffer_printf (struct buffer *buffer, const char *format, ...)
    __attribute__ ((format (printf, 2, 3)));
void buffer_vprintf (struct buffer *buffer, const char *format, va_list args);
void buffer_free (struct buffer *buffer);

/* The unsigned LEB128 varint at *P (before END), moving *P past it;
   false when it runs past END or is longer than 10 bytes or 64 bits.  */
bool varint_get (const uint8_t **p, const uint8_t *end, uint64_t *value);

/* The entity for C in HTML and XML text and attributes (&, <, >, " and
   '), or NULL for a character that stands for itself.  */
const char *markup_entity (char c);
/* TEXT with markup_entity's characters escaped.  */
void buffer_append_markup (struct buffer *buffer, const char *text);

/* ---- Hash tables of indices (open addressing) ----

   The entries live in the owner's arrays; a table maps hashes to their
   indices.  A slot holds an index + 1, 0 when empty.  */
struct index_table
{
  uint32_t *slots;
  size_t capacity; /* a power of two */
};

/* Is entry INDEX of OWNER equal to KEY?  */
typedef bool (*index_equals_fn) (const void *owner, uint32_t index,
                                 const void *key);
/* The hash of entry INDEX of OWNER.  */
typedef uint64_t (*index_hash_fn) (const void *owner, uint32_t index);

/* The slot of the entry that EQUALS KEY (of hash HASH), or the empty slot
   where it goes.  */
uint32_t *index_table_slot (struct index_table *table, uint64_t hash,
                            index_equals_fn equals, const void *owner,
                            const void *key);
/* Room for one more of ENTRIES entries: the table grows and rehashes
   with HASH_OF when over half full.  */
void index_table_reserve (struct index_table *table, size_t entries,
                          index_hash_fn hash_of, const void *owner);
void index_table_free (struct index_table *table);

/* A 64-bit finalizer, and FNV-1a of SIZE bytes finalized by it.  */
uint64_t hash_mix (uint64_t hash);
uint64_t hash_bytes (const void *data, size_t size);

/* ARRAY (of SIZE-byte elements, *CAPACITY of them) grown to hold at least
   COUNT + 1.  */
void *array_grow (void *array, size_t *capacity, size_t count, size_t size);

/* Human units: "1.5 MiB", "12.3 s".  Into OUT of SIZE bytes; returns OUT. */
char *format_bytes (double bytes, char *out, size_t size);

#endif /* MEMPROF_ANALYSIS_UTIL_H */
