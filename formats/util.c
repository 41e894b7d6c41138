/* See util.h.  */

#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static void
out_of_memory (size_t size)
{
  fprintf (stderr, "memprof: out of memory (asked for %zu bytes)\n", size);
  exit (1);
}

void *
xmalloc (size_t size)
{
  void *block = malloc (size ? size : 1);
  if (block == NULL)
    out_of_memory (size);
  return block;
}

void *
xcalloc (size_t count, size_t size)
{
  void *block = calloc (count ? count : 1, size ? size : 1);
  if (block == NULL)
    out_of_memory (count * size);
  return block;
}

void *
xrealloc (void *old, size_t size)
{
  void *block = realloc (old, size ? size : 1);
  if (block == NULL)
    out_of_memory (size);
  return block;
}

char *
xstrdup (const char *text)
{
  size_t size = strlen (text) + 1;
  return memcpy (xmalloc (size), text, size);
}

char *
xasprintf (const char *format, ...)
{
  struct buffer buffer = { 0 };
  va_list args;
  va_start (args, format);
  buffer_vprintf (&buffer, format, args);
  va_end (args);
  return buffer.data ? buffer.data : xstrdup ("");
}

void
warn (const char *format, ...)
{
  va_list args;
  fflush (stdout);
  fputs ("memprof: ", stderr);
  va_start (args, format);
  vfprintf (stderr, format, args);
  va_end (args);
  fputc ('\n', stderr);
}

void
die (int status, const char *format, ...)
{
  va_list args;
  fflush (stdout);
  fputs ("memprof: ", stderr);
  va_start (args, format);
  vfprintf (stderr, format, args);
  va_end (args);
  fputc ('\n', stderr);
  exit (status);
}

int
map_file (const char *path, struct mapped_file *file, char *error,
          size_t error_size)
{
  struct stat info;
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  file->data = NULL;
  file->size = 0;
  if (fd < 0)
    {
      snprintf (error, error_size, "%s: cannot open: %s", path,
                strerror (errno));
      return -1;
    }
  if (fstat (fd, &info) != 0 || !S_ISREG (info.st_mode))
    {
      snprintf (error, error_size, "%s: not a regular file", path);
      close (fd);
      return -1;
    }
  file->size = (size_t) info.st_size;
  if (file->size == 0)
    {
      static const uint8_t nothing[1];
      file->data = nothing;
      close (fd);
      return 0;
    }
  void *data = mmap (NULL, file->size, PROT_READ, MAP_PRIVATE, fd, 0);
  close (fd);
  if (data == MAP_FAILED)
    {
      snprintf (error, error_size, "%s: cannot map: %s", path,
                strerror (errno));
      file->size = 0;
      return -1;
    }
  file->data = data;
  return 0;
}

void
unmap_file (struct mapped_file *file)
{
  if (file->size > 0)
    munmap ((void *) file->data, file->size);
  file->data = NULL;
  file->size = 0;
}

static int
write_all (int fd, const void *data, size_t size)
{
  const char *bytes = data;
  while (size > 0)
    {
      ssize_t written = write (fd, bytes, size);
      if (written < 0 && errno == EINTR)
        continue;
      if (written <= 0)
        return -1;
      bytes += written;
      size -= (size_t) written;
    }
  return 0;
}

int
write_file_atomically (const char *path, const void *data, size_t size,
                       char *error, size_t error_size)
{
  if (strcmp (path, "-") == 0)
    {
      if (fwrite (data, 1, size, stdout) != size || fflush (stdout) != 0)
        {
          snprintf (error, error_size, "cannot write to stdout: %s",
                    strerror (errno));
          return -1;
        }
      return 0;
    }
  /* A device or a FIFO (/dev/null, a pipe's name) is written in place:
     renamed over, it would be replaced by a regular file.  */
  struct stat status;
  if (stat (path, &status) == 0 && !S_ISREG (status.st_mode))
    {
      int out = open (path, O_WRONLY | O_CLOEXEC);
      if (out < 0 || write_all (out, data, size) != 0)
        {
          snprintf (error, error_size, "%s: cannot write: %s", path,
                    strerror (errno));
          if (out >= 0)
            close (out);
          return -1;
        }
      close (out);
      return 0;
    }
  char *temporary = xasprintf ("%s.tmp.%ld.XXXXXX", path, (long) getpid ());
  int fd = mkstemp (temporary);
  if (fd < 0)
    {
      snprintf (error, error_size, "%s: cannot create: %s", path,
                strerror (errno));
      free (temporary);
      return -1;
    }
  fchmod (fd, 0644 & ~umask (umask (0)));
  if (write_all (fd, data, size) != 0 || fsync (fd) != 0)
    {
      snprintf (error, error_size, "%s: cannot write: %s", path,
                strerror (errno));
      close (fd);
      unlink (temporary);
      free (temporary);
      return -1;
    }
  if (close (fd) != 0 || rename (temporary, path) != 0)
    {
      snprintf (error, error_size, "%s: cannot write: %s", path,
                strerror (errno));
      unlink (temporary);
      free (temporary);
      return -1;
    }
  free (temporary);
  return 0;
}

void
buffer_append (struct buffer *buffer, const void *data, size_t size)
{
  if (buffer->length + size + 1 > buffer->capacity)
    {
      size_t capacity = buffer->capacity ? buffer->capacity : 256;
      while (buffer->length + size + 1 > capacity)
        capacity *= 2;
      buffer->data = xrealloc (buffer->data, capacity);
      buffer->capacity = capacity;
    }
  memcpy (buffer->data + buffer->length, data, size);
  buffer->length += size;
  buffer->data[buffer->length] = '\0';
}

void
buffer_vprintf (struct buffer *buffer, const char *format, va_list args)
{
  char small[256];
  va_list copy;
  va_copy (copy, args);
  int length = vsnprintf (small, sizeof small, format, copy);
  va_end (copy);
  if (length < 0)
    return;
  if ((size_t) length < sizeof small)
    {
      buffer_append (buffer, small, (size_t) length);
      return;
    }
  char *large = xmalloc ((size_t) length + 1);
  vsnprintf (large, (size_t) length + 1, format, args);
  buffer_append (buffer, large, (size_t) length);
  free (large);
}

void
buffer_printf (struct buffer *buffer, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  buffer_vprintf (buffer, format, args);
  va_end (args);
}

bool
varint_get (const uint8_t **p, const uint8_t *end, uint64_t *value)
{
  uint64_t result = 0;
  for (unsigned shift = 0; shift < 70; shift += 7)
    {
      if (*p == end)
        return false;
      uint8_t byte = *(*p)++;
      if (shift == 63 && byte > 1)
        return false;
      result |= (uint64_t) (byte & 0x7f) << shift;
      if ((byte & 0x80) == 0)
        {
          *value = result;
          return true;
        }
    }
  return false;
}

const char *
markup_entity (char c)
{
  switch (c)
    {
    case '&':
      return "&amp;";
    case '<':
      return "&lt;";
    case '>':
      return "&gt;";
    case '"':
      return "&quot;";
    case '\'':
      return "&#39;";
    default:
      return NULL;
    }
}

void
buffer_append_markup (struct buffer *buffer, const char *text)
{
  for (const char *p = text; *p; p++)
    {
      const char *entity = markup_entity (*p);
      if (entity)
        buffer_append (buffer, entity, strlen (entity));
      else
        buffer_append (buffer, p, 1);
    }
}

void
buffer_free (struct buffer *buffer)
{
  free (buffer->data);
  memset (buffer, 0, sizeof *buffer);
}

char *
format_bytes (double bytes, char *out, size_t size)
{
  static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
  int unit = 0;
  while (bytes >= 1024 && unit < 4)
    {
      bytes /= 1024;
      unit++;
    }
  if (unit == 0)
    snprintf (out, size, "%.0f B", bytes);
  else
    snprintf (out, size, "%.1f %s", bytes, units[unit]);
  return out;
}

uint32_t *
index_table_slot (struct index_table *table, uint64_t hash,
                  index_equals_fn equals, const void *owner, const void *key)
{
  size_t mask = table->capacity - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask)
    {
      uint32_t *slot = &table->slots[i];
      if (*slot == 0 || equals (owner, *slot - 1, key))
        return slot;
    }
}

void
index_table_reserve (struct index_table *table, size_t entries,
                     index_hash_fn hash_of, const void *owner)
{
  if ((entries + 1) * 2 <= table->capacity)
    return;
  size_t capacity = table->capacity ? table->capacity * 2 : 64;
  uint32_t *old = table->slots;
  size_t old_capacity = table->capacity;
  table->slots = xcalloc (capacity, sizeof *table->slots);
  table->capacity = capacity;
  for (size_t i = 0; i < old_capacity; i++)
    if (old[i] != 0)
      {
        size_t j = hash_of (owner, old[i] - 1) & (capacity - 1);
        while (table->slots[j] != 0)
          j = (j + 1) & (capacity - 1);
        table->slots[j] = old[i];
      }
  free (old);
}

void
index_table_free (struct index_table *table)
{
  free (table->slots);
  table->slots = NULL;
  table->capacity = 0;
}

uint64_t
hash_mix (uint64_t hash)
{
  hash ^= hash >> 33;
  hash *= 0xff51afd7ed558ccdULL;
  hash ^= hash >> 33;
  hash *= 0xc4ceb9fe1a85ec53ULL;
  hash ^= hash >> 33;
  return hash;
}

uint64_t
hash_bytes (const void *data, size_t size)
{
  const unsigned char *bytes = data;
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < size; i++)
    hash = (hash ^ bytes[i]) * 0x100000001b3ULL;
  return hash_mix (hash);
}

void *
array_grow (void *array, size_t *capacity, size_t count, size_t size)
{
  if (count < *capacity)
    return array;
  size_t grown = *capacity ? *capacity * 2 : 16;
  while (grown <= count)
    grown *= 2;
  *capacity = grown;
  return xrealloc (array, grown * size);
}
