/* Reading LLVM MemProf raw profiles (versions 3 and 4; several profiles
   laid end to end in one file).  Every offset and count is checked
   against the data before use: bad input gives one message naming the
   file, the byte offset and what was expected, never a crash.  */

#ifndef MEMPROF_RAWREADER_H
#define MEMPROF_RAWREADER_H

#include <stddef.h>
#include <stdint.h>

#include "mib.h"
#include "rawformat.h"

struct raw_read_record
{
  uint64_t id;
  struct memprof_mib mib; /* for v3 input, access_histogram_size is 0 */
  uint64_t *histogram;    /* mib.access_histogram_size values, or NULL */
};

struct raw_read_stack
{
  uint64_t id;
  uint64_t depth;
  uint64_t *pcs; /* leaf first */
};

struct raw_read_profile
{
  uint64_t offset; /* of its header in the file */
  uint64_t version;
  size_t segment_count;
  struct memprof_raw_segment *segments;
  size_t record_count;
  struct raw_read_record *records;
  size_t stack_count;
  struct raw_read_stack *stacks;
};

struct raw_read_file
{
  size_t profile_count;
  struct raw_read_profile *profiles;
};

/* Parse SIZE bytes at DATA, named NAME in messages.  Returns 0, or -1 with
   a message in ERROR.  On success free the result with raw_read_free.  */
int raw_read_buffer (const void *data, size_t size, const char *name,
                     struct raw_read_file *out, char *error, size_t error_size);

/* Parse the profiles of SIZE bytes at DATA one at a time, calling VISIT
   with each (freed when VISIT returns; VISIT may take over its arrays by
   clearing their fields).  A VISIT that returns nonzero stops the reading
   with -1 (put the message in ERROR first); bad input gives -1 and a
   message in ERROR.  */
int raw_read_each (const void *data, size_t size, const char *name,
                   int (*visit) (const struct raw_read_profile *, void *),
                   void *cookie, char *error, size_t error_size);

/* The same for the file at PATH.  */
int raw_read_path (const char *path, struct raw_read_file *out, char *error,
                   size_t error_size);

void raw_read_free (struct raw_read_file *file);

/* The stack with ID in PROFILE, or NULL (a binary search: the reader sorts
   the stacks by id).  */
const struct raw_read_stack *
raw_read_find_stack (const struct raw_read_profile *profile, uint64_t id);

#endif /* MEMPROF_RAWREADER_H */
