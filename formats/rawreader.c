/* The raw profile reader: see rawreader.h and docs/profile-format.md.  */

#include "rawreader.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cursor
{
  const uint8_t *data;
  uint64_t size;  /* of the whole file */
  uint64_t limit; /* end of the current profile */
  const char *name;
  char *error;
  size_t error_size;
};

static int
fail (const struct cursor *c, uint64_t offset, const char *format, ...)
{
  char detail[256];
  va_list args;
  va_start (args, format);
  vsnprintf (detail, sizeof detail, format, args);
  va_end (args);
  snprintf (c->error, c->error_size, "%s: at byte %llu: %s", c->name,
            (unsigned long long) offset, detail);
  return -1;
}

/* Is [OFFSET, OFFSET + COUNT * UNIT) inside the current profile?  */
static int
fits (const struct cursor *c, uint64_t offset, uint64_t count, uint64_t unit)
{
  if (unit != 0
      && count > (c->limit - (offset < c->limit ? offset : c->limit)) / unit)
    return 0;
  return offset <= c->limit && offset + count * unit <= c->limit;
}

static uint64_t
u64_at (const struct cursor *c, uint64_t offset)
{
  uint64_t value;
  memcpy (&value, c->data + offset, sizeof value);
  return value;
}

static int
read_segments (struct cursor *c, uint64_t at, struct raw_read_profile *p)
{
  uint64_t count;
  if (!fits (c, at, 1, 8))
    return fail (
        c, at,
        "expected the segment count (8 bytes), found the end of the profile");
  count = u64_at (c, at);
  if (!fits (c, at + 8, count, MEMPROF_RAW_SEGMENT_SIZE))
    return fail (
        c, at,
        "segment count %llu needs %llu bytes but the profile has %llu left",
        (unsigned long long) count, (unsigned long long) count * 64,
        (unsigned long long) (c->limit - at - 8));
  p->segment_count = count;
  p->segments = calloc (count ? count : 1, sizeof *p->segments);
  if (p->segments == NULL)
    return fail (c, at, "out of memory");
  memcpy (p->segments, c->data + at + 8, count * MEMPROF_RAW_SEGMENT_SIZE);
  for (uint64_t i = 0; i < count; i++)
    if (p->segments[i].build_id_size > MEMPROF_RAW_BUILD_ID_MAX)
      return fail (c, at + 8 + i * 64 + 24,
                   "build id size %llu is over the %d-byte maximum",
                   (unsigned long long) p->segments[i].build_id_size,
                   MEMPROF_RAW_BUILD_ID_MAX);
  return 0;
}

static int
read_records (struct cursor *c, uint64_t at, struct raw_read_profile *p)
{
  uint64_t count, pos;
  uint64_t block = p->version >= 4 ? MEMPROF_MIB_V4_SIZE : MEMPROF_MIB_V3_SIZE;
  if (!fits (c, at, 1, 8))
    return fail (
        c, at,
        "expected the MIB count (8 bytes), found the end of the profile");
  count = u64_at (c, at);
  if (!fits (c, at + 8, count, 8 + block))
    return fail (c, at,
                 "MIB count %llu needs at least %llu bytes but the profile has "
                 "%llu left",
                 (unsigned long long) count,
                 (unsigned long long) (count * (8 + block)),
                 (unsigned long long) (c->limit - at - 8));
  p->records = calloc (count ? count : 1, sizeof *p->records);
  if (p->records == NULL)
    return fail (c, at, "out of memory");
  pos = at + 8;
  for (uint64_t i = 0; i < count; i++)
    {
      struct raw_read_record *r = &p->records[i];
      if (!fits (c, pos, 1, 8 + block))
        return fail (c, pos,
                     "expected MIB %llu of %llu (%llu bytes), found the end of "
                     "the profile",
                     (unsigned long long) i + 1, (unsigned long long) count,
                     (unsigned long long) (8 + block));
      r->id = u64_at (c, pos);
      memcpy (&r->mib, c->data + pos + 8, block);
      if (block == MEMPROF_MIB_V3_SIZE)
        {
          r->mib.access_histogram_size = 0;
          r->mib.access_histogram = 0;
        }
      p->record_count = i + 1;
      pos += 8 + block;
      if (r->mib.access_histogram_size > 0)
        {
          uint32_t n = r->mib.access_histogram_size;
          if (!fits (c, pos, n, 8))
            return fail (c, pos - block + 132,
                         "histogram size %u of MIB %llu runs past the end of "
                         "the profile",
                         n, (unsigned long long) i + 1);
          r->histogram = malloc ((size_t) n * 8);
          if (r->histogram == NULL)
            return fail (c, pos, "out of memory");
          memcpy (r->histogram, c->data + pos, (size_t) n * 8);
          pos += (uint64_t) n * 8;
        }
      r->mib.access_histogram = 0;
    }
  return 0;
}

static int
read_stacks (struct cursor *c, uint64_t at, struct raw_read_profile *p)
{
  uint64_t count, pos;
  if (!fits (c, at, 1, 8))
    return fail (
        c, at,
        "expected the stack count (8 bytes), found the end of the profile");
  count = u64_at (c, at);
  if (!fits (c, at + 8, count, 16))
    return fail (c, at,
                 "stack count %llu needs at least %llu bytes but the profile "
                 "has %llu left",
                 (unsigned long long) count, (unsigned long long) count * 16,
                 (unsigned long long) (c->limit - at - 8));
  p->stacks = calloc (count ? count : 1, sizeof *p->stacks);
  if (p->stacks == NULL)
    return fail (c, at, "out of memory");
  pos = at + 8;
  for (uint64_t i = 0; i < count; i++)
    {
      struct raw_read_stack *s = &p->stacks[i];
      if (!fits (c, pos, 2, 8))
        return fail (
            c, pos, "expected stack %llu of %llu, found the end of the profile",
            (unsigned long long) i + 1, (unsigned long long) count);
      s->id = u64_at (c, pos);
      s->depth = u64_at (c, pos + 8);
      if (!fits (c, pos + 16, s->depth, 8))
        return fail (
            c, pos + 8,
            "stack %llu claims %llu frames, past the end of the profile",
            (unsigned long long) s->id, (unsigned long long) s->depth);
      s->pcs = malloc (s->depth ? s->depth * 8 : 1);
      if (s->pcs == NULL)
        return fail (c, pos, "out of memory");
      memcpy (s->pcs, c->data + pos + 16, s->depth * 8);
      p->stack_count = i + 1;
      pos += 16 + s->depth * 8;
    }
  return 0;
}

static int
compare_stack_ids (const void *a, const void *b)
{
  uint64_t x = ((const struct raw_read_stack *) a)->id;
  uint64_t y = ((const struct raw_read_stack *) b)->id;
  return x < y ? -1 : x > y;
}

const struct raw_read_stack *
raw_read_find_stack (const struct raw_read_profile *profile, uint64_t id)
{
  struct raw_read_stack key = { .id = id };
  return bsearch (&key, profile->stacks, profile->stack_count,
                  sizeof *profile->stacks, compare_stack_ids);
}

static int
read_profile (struct cursor *c, uint64_t at, struct raw_read_profile *p)
{
  struct memprof_raw_header h;
  if (c->size - at < MEMPROF_RAW_HEADER_SIZE)
    return fail (c, at, "expected a %d-byte profile header, found %llu bytes",
                 MEMPROF_RAW_HEADER_SIZE, (unsigned long long) (c->size - at));
  memcpy (&h, c->data + at, sizeof h);
  p->offset = at;
  if (h.magic != MEMPROF_RAW_MAGIC)
    return fail (c, at,
                 "expected the MemProf raw magic 0x%016llx, found 0x%016llx "
                 "(not a raw MemProf profile)",
                 (unsigned long long) MEMPROF_RAW_MAGIC,
                 (unsigned long long) h.magic);
  if (h.version < MEMPROF_RAW_OLDEST_VERSION || h.version > MEMPROF_RAW_VERSION)
    return fail (c, at + 8,
                 "raw profile version %llu is not supported (expected 3 or 4)",
                 (unsigned long long) h.version);
  p->version = h.version;
  if (h.total_size < MEMPROF_RAW_HEADER_SIZE || h.total_size > c->size - at)
    return fail (
        c, at + 16,
        "profile size %llu does not fit: %llu bytes remain in the file",
        (unsigned long long) h.total_size, (unsigned long long) (c->size - at));
  c->limit = at + h.total_size;
  if (h.segment_offset < MEMPROF_RAW_HEADER_SIZE
      || h.segment_offset >= h.total_size)
    return fail (c, at + 24,
                 "segment offset %llu is outside the profile (size %llu)",
                 (unsigned long long) h.segment_offset,
                 (unsigned long long) h.total_size);
  if (h.mib_offset < MEMPROF_RAW_HEADER_SIZE || h.mib_offset >= h.total_size)
    return fail (
        c, at + 32, "MIB offset %llu is outside the profile (size %llu)",
        (unsigned long long) h.mib_offset, (unsigned long long) h.total_size);
  if (h.stack_offset < MEMPROF_RAW_HEADER_SIZE
      || h.stack_offset >= h.total_size)
    return fail (
        c, at + 40, "stack offset %llu is outside the profile (size %llu)",
        (unsigned long long) h.stack_offset, (unsigned long long) h.total_size);
  if (read_segments (c, at + h.segment_offset, p) != 0
      || read_records (c, at + h.mib_offset, p) != 0
      || read_stacks (c, at + h.stack_offset, p) != 0)
    return -1;
  /* Sorted by id, so that finding a record's stack is a binary search.  */
  qsort (p->stacks, p->stack_count, sizeof *p->stacks, compare_stack_ids);
  for (size_t i = 1; i < p->stack_count; i++)
    if (p->stacks[i].id == p->stacks[i - 1].id)
      return fail (c, at + h.stack_offset, "stack id %llu appears twice",
                   (unsigned long long) p->stacks[i].id);
  for (size_t i = 0; i < p->record_count; i++)
    if (raw_read_find_stack (p, p->records[i].id) == NULL)
      return fail (c, at + h.mib_offset,
                   "MIB with stack id %llu has no call stack in the "
                   "stack section",
                   (unsigned long long) p->records[i].id);
  return 0;
}

static void
free_profile (struct raw_read_profile *p)
{
  for (size_t j = 0; j < p->record_count; j++)
    free (p->records[j].histogram);
  for (size_t j = 0; j < p->stack_count; j++)
    free (p->stacks[j].pcs);
  free (p->segments);
  free (p->records);
  free (p->stacks);
  memset (p, 0, sizeof *p);
}

int
raw_read_each (const void *data, size_t size, const char *name,
               int (*visit) (const struct raw_read_profile *, void *),
               void *cookie, char *error, size_t error_size)
{
  struct cursor c = { data, size, size, name, error, error_size };
  uint64_t at = 0;

  if (size == 0)
    return fail (&c, 0, "the file is empty");
  while (at < size)
    {
      struct raw_read_profile profile;
      int result;
      memset (&profile, 0, sizeof profile);
      result = read_profile (&c, at, &profile);
      if (result == 0)
        result = visit (&profile, cookie);
      free_profile (&profile);
      if (result != 0)
        return -1;
      at = c.limit;
    }
  return 0;
}

static int
collect_profile (const struct raw_read_profile *profile, void *cookie)
{
  struct raw_read_file *out = cookie;
  struct raw_read_profile *grown
      = realloc (out->profiles, (out->profile_count + 1) * sizeof *grown);
  if (grown == NULL)
    return -1;
  out->profiles = grown;
  /* Take over the arrays: the caller frees only what it still owns.  */
  grown[out->profile_count] = *profile;
  memset ((struct raw_read_profile *) profile, 0, sizeof *profile);
  out->profile_count++;
  return 0;
}

int
raw_read_buffer (const void *data, size_t size, const char *name,
                 struct raw_read_file *out, char *error, size_t error_size)
{
  memset (out, 0, sizeof *out);
  if (error_size > 0)
    error[0] = '\0';
  if (raw_read_each (data, size, name, collect_profile, out, error, error_size)
      != 0)
    {
      if (error[0] == '\0')
        snprintf (error, error_size, "%s: out of memory", name);
      raw_read_free (out);
      return -1;
    }
  return 0;
}

int
raw_read_path (const char *path, struct raw_read_file *out, char *error,
               size_t error_size)
{
  FILE *f = fopen (path, "rb");
  uint8_t *data = NULL;
  size_t size = 0, capacity = 0;
  int result;

  memset (out, 0, sizeof *out);
  if (f == NULL)
    {
      snprintf (error, error_size, "%s: cannot open: %s", path,
                strerror (errno));
      return -1;
    }
  for (;;)
    {
      size_t n;
      if (size == capacity)
        {
          uint8_t *grown;
          capacity = capacity ? capacity * 2 : 65536;
          grown = realloc (data, capacity);
          if (grown == NULL)
            {
              free (data);
              fclose (f);
              snprintf (error, error_size, "%s: out of memory", path);
              return -1;
            }
          data = grown;
        }
      n = fread (data + size, 1, capacity - size, f);
      size += n;
      if (n == 0)
        break;
    }
  if (ferror (f))
    {
      snprintf (error, error_size, "%s: read error: %s", path,
                strerror (errno));
      free (data);
      fclose (f);
      return -1;
    }
  fclose (f);
  result = raw_read_buffer (data, size, path, out, error, error_size);
  free (data);
  return result;
}

void
raw_read_free (struct raw_read_file *file)
{
  for (size_t i = 0; i < file->profile_count; i++)
    free_profile (&file->profiles[i]);
  free (file->profiles);
  memset (file, 0, sizeof *file);
}
