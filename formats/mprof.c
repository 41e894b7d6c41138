/* Writing and reading .mprof files: see mprof.h and
   docs/profile-format.md.  */

#include "mprof.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "globals.h"
#include "util.h"

/* ---- Writing ---- */

static void
put_u32 (struct buffer *out, uint32_t value)
{
  buffer_append (out, &value, sizeof value);
}

static void
put_u64 (struct buffer *out, uint64_t value)
{
  buffer_append (out, &value, sizeof value);
}

/* Start a section: returns where its length goes.  */
static size_t
begin_section (struct buffer *out, uint32_t tag)
{
  put_u32 (out, tag);
  put_u32 (out, 0);
  size_t at = out->length;
  put_u64 (out, 0);
  return at;
}

static void
end_section (struct buffer *out, size_t at)
{
  uint64_t length = out->length - at - 8;
  memcpy (out->data + at, &length, sizeof length);
}

struct guid_context
{
  uint64_t guid;
  uint32_t context;
};

static int
compare_guid_contexts (const void *a, const void *b)
{
  const struct guid_context *x = a, *y = b;
  if (x->guid != y->guid)
    return x->guid < y->guid ? -1 : 1;
  return x->context < y->context ? -1 : x->context > y->context;
}

/* The canonical order of a profile's modules, locations and contexts:
   two profiles with the same contents serialize to the same bytes,
   whatever order their inputs were merged in.  */
struct canonical
{
  const struct profile *profile;
  uint32_t *module_order, *module_rank;     /* new -> old, old -> new */
  uint32_t *location_order, *location_rank; /* the same for locations */
  uint32_t *context_order;                  /* new -> old */
  uint32_t *granule_order, *global_order;   /* new -> old */
};

static const struct canonical *sorting;

static int
compare_modules (const void *a, const void *b)
{
  const struct profile_module *x
      = &sorting->profile->modules[*(const uint32_t *) a];
  const struct profile_module *y
      = &sorting->profile->modules[*(const uint32_t *) b];
  if (x->build_id_size != y->build_id_size)
    return x->build_id_size < y->build_id_size ? -1 : 1;
  return memcmp (x->build_id, y->build_id, MEMPROF_RAW_BUILD_ID_MAX);
}

static uint32_t
module_rank (const struct canonical *c, uint32_t module)
{
  return module == PROFILE_NO_MODULE ? PROFILE_NO_MODULE
                                     : c->module_rank[module];
}

static int
compare_locations (const void *a, const void *b)
{
  const struct profile_location *x
      = &sorting->profile->locations[*(const uint32_t *) a];
  const struct profile_location *y
      = &sorting->profile->locations[*(const uint32_t *) b];
  uint32_t mx = module_rank (sorting, x->module);
  uint32_t my = module_rank (sorting, y->module);
  if (mx != my)
    return mx < my ? -1 : 1;
  return x->address < y->address ? -1 : x->address > y->address;
}

static int
compare_contexts (const void *a, const void *b)
{
  const struct profile *profile = sorting->profile;
  const struct profile_context *x = &profile->contexts[*(const uint32_t *) a];
  const struct profile_context *y = &profile->contexts[*(const uint32_t *) b];
  const uint32_t *lx = profile_context_locations (profile, x);
  const uint32_t *ly = profile_context_locations (profile, y);
  for (uint32_t i = 0; i < x->location_count && i < y->location_count; i++)
    {
      uint32_t rx = sorting->location_rank[lx[i]];
      uint32_t ry = sorting->location_rank[ly[i]];
      if (rx != ry)
        return rx < ry ? -1 : 1;
    }
  return x->location_count < y->location_count
             ? -1
             : x->location_count > y->location_count;
}

static int
compare_granules (const void *a, const void *b)
{
  const struct profile_granule *x
      = &sorting->profile->granules[*(const uint32_t *) a];
  const struct profile_granule *y
      = &sorting->profile->granules[*(const uint32_t *) b];
  uint32_t mx = module_rank (sorting, x->module);
  uint32_t my = module_rank (sorting, y->module);
  if (mx != my)
    return mx < my ? -1 : 1;
  return x->address < y->address ? -1 : x->address > y->address;
}

/* By module, address, size, name, file and flags: by contents, not by
   string numbers, which depend on the order of the inputs.  */
static int
compare_globals (const void *a, const void *b)
{
  const struct profile *profile = sorting->profile;
  const struct profile_global *x = &profile->globals[*(const uint32_t *) a];
  const struct profile_global *y = &profile->globals[*(const uint32_t *) b];
  uint32_t mx = module_rank (sorting, x->module);
  uint32_t my = module_rank (sorting, y->module);
  if (mx != my)
    return mx < my ? -1 : 1;
  if (x->address != y->address)
    return x->address < y->address ? -1 : 1;
  if (x->size != y->size)
    return x->size < y->size ? -1 : 1;
  int order = strcmp (profile_string (profile, x->name),
                      profile_string (profile, y->name));
  if (order == 0)
    order = strcmp (profile_string (profile, x->file),
                    profile_string (profile, y->file));
  if (order != 0)
    return order;
  return x->flags < y->flags ? -1 : x->flags > y->flags;
}

static uint32_t *
identity (size_t count)
{
  uint32_t *order = xmalloc (count * sizeof *order + 1);
  for (size_t i = 0; i < count; i++)
    order[i] = (uint32_t) i;
  return order;
}

static uint32_t *
inverse (const uint32_t *order, size_t count)
{
  uint32_t *rank = xmalloc (count * sizeof *rank + 1);
  for (size_t i = 0; i < count; i++)
    rank[order[i]] = (uint32_t) i;
  return rank;
}

static void
canonicalize (const struct profile *profile, struct canonical *c)
{
  c->profile = profile;
  sorting = c;
  c->module_order = identity (profile->module_count);
  qsort (c->module_order, profile->module_count, sizeof (uint32_t),
         compare_modules);
  c->module_rank = inverse (c->module_order, profile->module_count);
  c->location_order = identity (profile->location_count);
  qsort (c->location_order, profile->location_count, sizeof (uint32_t),
         compare_locations);
  c->location_rank = inverse (c->location_order, profile->location_count);
  c->context_order = identity (profile->context_count);
  qsort (c->context_order, profile->context_count, sizeof (uint32_t),
         compare_contexts);
  c->granule_order = identity (profile->granule_count);
  qsort (c->granule_order, profile->granule_count, sizeof (uint32_t),
         compare_granules);
  c->global_order = identity (profile->global_count);
  qsort (c->global_order, profile->global_count, sizeof (uint32_t),
         compare_globals);
  sorting = NULL;
}

static void
free_canonical (struct canonical *c)
{
  free (c->module_order);
  free (c->module_rank);
  free (c->location_order);
  free (c->location_rank);
  free (c->context_order);
  free (c->granule_order);
  free (c->global_order);
}

/* The heap's peak (profile_peak): contexts by their rank in the file.  */
static void
write_peak (const struct profile *profile, const struct canonical *c,
            struct buffer *out)
{
  const struct profile_peak *peak = &profile->peak;
  uint32_t *rank = inverse (c->context_order, profile->context_count);
  size_t at = begin_section (out, MPROF_PEAK);
  put_u64 (out, peak->runs);
  put_u64 (out, peak->bytes);
  put_u64 (out, peak->blocks);
  put_u64 (out, peak->time_us);
  put_u64 (out, peak->snapshot_bytes);
  put_u64 (out, peak->snapshot_time_us);
  put_u64 (out, peak->duration_us);
  put_u32 (out, peak->sampled);
  put_u32 (out, 0);
  uint64_t live = 0;
  for (size_t i = 0; i < profile->context_count; i++)
    live += profile->contexts[i].peak_bytes > 0;
  put_u64 (out, live);
  for (size_t i = 0; i < profile->context_count; i++)
    {
      const struct profile_context *context
          = &profile->contexts[c->context_order[i]];
      if (context->peak_bytes == 0)
        continue;
      put_u32 (out, (uint32_t) i);
      put_u32 (out, 0);
      put_u64 (out, context->peak_bytes);
      put_u64 (out, context->peak_blocks);
    }
  put_u64 (out, peak->sample_count);
  for (size_t i = 0; i < peak->sample_count; i++)
    {
      const struct profile_peak_sample *sample = &peak->samples[i];
      put_u64 (out, sample->time_us);
      put_u64 (out, sample->live_bytes);
      put_u64 (out, sample->live_blocks);
      for (int k = 0; k < PROFILE_PEAK_TOP; k++)
        {
          uint32_t context = sample->top_context[k];
          put_u32 (out, context == PROFILE_PEAK_NO_CONTEXT ? context
                                                           : rank[context]);
          put_u32 (out, 0);
          put_u64 (out, sample->top_bytes[k]);
        }
    }
  end_section (out, at);
  free (rank);
}

/* The payload of PROFILE in canonical order, keeping only the strings
   and frames its locations use.  */
static void
serialize (const struct profile *profile, struct buffer *out)
{
  struct canonical c;
  canonicalize (profile, &c);

  /* Strings in use, numbered in order of first use.  */
  uint32_t *string_map = xcalloc (profile->string_count, sizeof *string_map);
  uint32_t *strings = xmalloc (profile->string_count * sizeof *strings);
  size_t string_count = 1;
  strings[0] = 0;
#define USE_STRING(index)                                                      \
  do                                                                           \
    {                                                                          \
      if ((index) != 0 && string_map[index] == 0)                              \
        {                                                                      \
          string_map[index] = (uint32_t) string_count;                         \
          strings[string_count++] = (index);                                   \
        }                                                                      \
    }                                                                          \
  while (0)
  for (size_t i = 0; i < profile->module_count; i++)
    USE_STRING (profile->modules[c.module_order[i]].path);
  size_t frame_total = 0;
  for (size_t i = 0; i < profile->location_count; i++)
    {
      const struct profile_location *location
          = &profile->locations[c.location_order[i]];
      for (uint32_t j = 0; j < location->frame_count; j++)
        {
          const struct profile_frame *frame
              = &profile->frames[location->first_frame + j];
          USE_STRING (frame->function);
          USE_STRING (frame->file);
        }
      frame_total += location->frame_count;
    }
  for (size_t i = 0; i < profile->global_count; i++)
    {
      USE_STRING (profile->globals[c.global_order[i]].name);
      USE_STRING (profile->globals[c.global_order[i]].file);
    }
#undef USE_STRING

  size_t at = begin_section (out, MPROF_SUMMARY);
  put_u64 (out, profile->inputs);
  put_u64 (out, profile->inputs_with_extra);
  put_u32 (out, profile->histogram_granule);
  put_u32 (out, module_rank (&c, profile->main_module));
  end_section (out, at);

  at = begin_section (out, MPROF_STRINGS);
  put_u64 (out, string_count);
  for (size_t i = 0; i < string_count; i++)
    {
      const char *text = profile->strings[strings[i]];
      put_u32 (out, (uint32_t) strlen (text));
      buffer_append (out, text, strlen (text));
    }
  end_section (out, at);

  at = begin_section (out, MPROF_MODULES);
  put_u64 (out, profile->module_count);
  for (size_t i = 0; i < profile->module_count; i++)
    {
      const struct profile_module *module
          = &profile->modules[c.module_order[i]];
      put_u32 (out, module->build_id_size);
      buffer_append (out, module->build_id, MEMPROF_RAW_BUILD_ID_MAX);
      put_u32 (out, string_map[module->path]);
    }
  end_section (out, at);

  at = begin_section (out, MPROF_FRAMES);
  put_u64 (out, frame_total);
  for (size_t i = 0; i < profile->location_count; i++)
    {
      const struct profile_location *location
          = &profile->locations[c.location_order[i]];
      for (uint32_t j = 0; j < location->frame_count; j++)
        {
          const struct profile_frame *frame
              = &profile->frames[location->first_frame + j];
          put_u32 (out, string_map[frame->function]);
          put_u32 (out, string_map[frame->file]);
          put_u32 (out, frame->line);
          put_u32 (out, frame->column);
          put_u32 (out, frame->decl_line);
          put_u32 (out, frame->flags);
          put_u64 (out, frame->guid);
        }
    }
  end_section (out, at);

  at = begin_section (out, MPROF_LOCATIONS);
  put_u64 (out, profile->location_count);
  uint32_t first_frame = 0;
  for (size_t i = 0; i < profile->location_count; i++)
    {
      const struct profile_location *location
          = &profile->locations[c.location_order[i]];
      put_u32 (out, module_rank (&c, location->module));
      put_u32 (out, location->frame_count);
      put_u64 (out, location->address);
      put_u32 (out, location->frame_count ? first_frame : 0);
      put_u32 (out, 0);
      first_frame += location->frame_count;
    }
  end_section (out, at);

  at = begin_section (out, MPROF_CONTEXTS);
  put_u64 (out, profile->context_count);
  size_t pairs_count = 0, pairs_capacity = 0;
  struct guid_context *pairs = NULL;
  for (size_t i = 0; i < profile->context_count; i++)
    {
      const struct profile_context *context
          = &profile->contexts[c.context_order[i]];
      const uint32_t *locations = profile_context_locations (profile, context);
      put_u32 (out, context->location_count);
      /* Flag 2: accesses were counted one in N (the rate itself is not
         kept: only that a count of 0 does not mean untouched).  */
      put_u32 (out, context->has_extra
                        ? 1 | (context->extra.access_sample_rate > 1 ? 2 : 0)
                        : 0);
      for (uint32_t j = 0; j < context->location_count; j++)
        put_u32 (out, c.location_rank[locations[j]]);
      if (context->location_count % 2 != 0)
        put_u32 (out, 0);
      struct memprof_mib mib = context->mib;
      if (context->histogram == NULL)
        mib.access_histogram_size = 0;
      mib.access_histogram = 0;
      buffer_append (out, &mib, sizeof mib);
      if (context->histogram != NULL)
        buffer_append (out, context->histogram,
                       mib.access_histogram_size * sizeof (uint64_t));
      /* Side-file data only with its flag: a reader ignores it without,
         so writing it would make the file depend on what went in.  */
      struct profile_extra extra = { 0 };
      if (context->has_extra)
        extra = context->extra;
      put_u64 (out, extra.untouched_allocations);
      put_u64 (out, extra.touched_bytes);
      put_u64 (out, extra.live_allocations);
      put_u64 (out, extra.live_bytes);
      for (uint32_t j = 0; j < context->location_count; j++)
        {
          const struct profile_location *location
              = &profile->locations[locations[j]];
          for (uint32_t k = 0; k < location->frame_count; k++)
            {
              if (pairs_count == pairs_capacity)
                {
                  pairs_capacity = pairs_capacity ? pairs_capacity * 2 : 256;
                  pairs = xrealloc (pairs, pairs_capacity * sizeof *pairs);
                }
              pairs[pairs_count].guid
                  = profile->frames[location->first_frame + k].guid;
              pairs[pairs_count++].context = (uint32_t) i;
            }
        }
    }
  end_section (out, at);

  /* The function index: GUIDs ascending, each with its contexts.  */
  if (pairs_count > 0) /* PAIRS is NULL when no frame is symbolized */
    qsort (pairs, pairs_count, sizeof *pairs, compare_guid_contexts);
  size_t unique = 0, functions = 0;
  for (size_t i = 0; i < pairs_count; i++)
    if (i == 0 || compare_guid_contexts (&pairs[i], &pairs[i - 1]) != 0)
      {
        pairs[unique++] = pairs[i];
        if (unique == 1 || pairs[unique - 1].guid != pairs[unique - 2].guid)
          functions++;
      }
  at = begin_section (out, MPROF_FUNCTIONS);
  put_u64 (out, functions);
  for (size_t i = 0; i < unique;)
    {
      size_t j = i;
      while (j < unique && pairs[j].guid == pairs[i].guid)
        j++;
      put_u64 (out, pairs[i].guid);
      put_u32 (out, (uint32_t) i);
      put_u32 (out, (uint32_t) (j - i));
      i = j;
    }
  put_u64 (out, unique);
  for (size_t i = 0; i < unique; i++)
    put_u32 (out, pairs[i].context);
  if (unique % 2 != 0)
    put_u32 (out, 0);
  end_section (out, at);

  /* Only a profile that counted globals has them: other files stay as
     they were before there were globals.  */
  if (profile->global_inputs > 0 || profile->granule_count > 0
      || profile->global_count > 0)
    {
      uint64_t *accesses
          = xmalloc (profile->global_count * sizeof *accesses + 1);
      profile_global_accesses (profile, accesses);
      at = begin_section (out, MPROF_GLOBALS);
      put_u64 (out, profile->global_inputs);
      put_u64 (out, profile->granule_count);
      for (size_t i = 0; i < profile->granule_count; i++)
        {
          const struct profile_granule *granule
              = &profile->granules[c.granule_order[i]];
          put_u32 (out, module_rank (&c, granule->module));
          put_u32 (out, 0);
          put_u64 (out, granule->address);
          put_u64 (out, granule->accesses);
        }
      put_u64 (out, profile->global_count);
      for (size_t i = 0; i < profile->global_count; i++)
        {
          const struct profile_global *global
              = &profile->globals[c.global_order[i]];
          put_u32 (out, module_rank (&c, global->module));
          put_u32 (out, string_map[global->name]);
          put_u32 (out, string_map[global->file]);
          put_u32 (out, global->flags);
          put_u64 (out, global->address);
          put_u64 (out, global->size);
          put_u64 (out, accesses[c.global_order[i]]);
        }
      end_section (out, at);
      free (accesses);
    }

  if (profile->peak.runs > 0)
    write_peak (profile, &c, out);

  free (pairs);
  free (strings);
  free (string_map);
  free_canonical (&c);
}

int
mprof_write (const struct profile *profile, const char *path, char *error,
             size_t error_size)
{
  struct buffer payload = { 0 };
  serialize (profile, &payload);

  size_t bound = ZSTD_compressBound (payload.length);
  uint8_t *file = xmalloc (MPROF_HEADER_SIZE + bound);
  size_t compressed
      = ZSTD_compress (file + MPROF_HEADER_SIZE, bound,
                       payload.data ? payload.data : "", payload.length, 6);
  if (ZSTD_isError (compressed))
    {
      snprintf (error, error_size, "%s: cannot compress: %s", path,
                ZSTD_getErrorName (compressed));
      buffer_free (&payload);
      free (file);
      return -1;
    }
  uint64_t magic = MPROF_MAGIC, payload_size = payload.length,
           compressed_size = compressed;
  uint32_t version = MPROF_VERSION, flags = 0;
  memcpy (file, &magic, 8);
  memcpy (file + 8, &version, 4);
  memcpy (file + 12, &flags, 4);
  memcpy (file + 16, &payload_size, 8);
  memcpy (file + 24, &compressed_size, 8);
  int result = write_file_atomically (
      path, file, MPROF_HEADER_SIZE + compressed, error, error_size);
  buffer_free (&payload);
  free (file);
  return result;
}

/* ---- Reading ---- */

struct reader
{
  const uint8_t *data; /* the payload */
  uint64_t size;
  uint64_t at;
  uint64_t limit; /* end of the current section */
  const char *name;
  char *error;
  size_t error_size;
};

static int bad (struct reader *r, uint64_t offset, const char *format, ...)
    __attribute__ ((format (printf, 3, 4)));

static int
bad (struct reader *r, uint64_t offset, const char *format, ...)
{
  char detail[300];
  va_list args;
  va_start (args, format);
  vsnprintf (detail, sizeof detail, format, args);
  va_end (args);
  snprintf (r->error, r->error_size,
            "%s: at byte %llu of the decompressed payload: %s", r->name,
            (unsigned long long) offset, detail);
  return -1;
}

/* Are COUNT items of UNIT bytes left in the section?  */
static bool
left (const struct reader *r, uint64_t count, uint64_t unit)
{
  uint64_t remaining = r->limit - r->at;
  return unit == 0 || count <= remaining / unit;
}

static uint32_t
get_u32 (struct reader *r)
{
  uint32_t value;
  memcpy (&value, r->data + r->at, sizeof value);
  r->at += sizeof value;
  return value;
}

static uint64_t
get_u64 (struct reader *r)
{
  uint64_t value;
  memcpy (&value, r->data + r->at, sizeof value);
  r->at += sizeof value;
  return value;
}

/* Read a count of items of at least UNIT bytes each.  */
static int
get_count (struct reader *r, uint64_t unit, const char *what, uint64_t *count)
{
  if (!left (r, 1, 8))
    return bad (r, r->at,
                "expected the count of %s, found the end of the "
                "section",
                what);
  uint64_t at = r->at;
  *count = get_u64 (r);
  if (!left (r, *count, unit) || *count > UINT32_MAX)
    return bad (
        r, at, "%llu %s need at least %llu bytes; the section has %llu left",
        (unsigned long long) *count, what, (unsigned long long) (*count * unit),
        (unsigned long long) (r->limit - r->at));
  return 0;
}

/* What the sections hold, checked and mapped into the profile.  */
struct incoming
{
  uint64_t inputs, inputs_with_extra;
  uint32_t histogram_granule;
  uint32_t *strings; /* index in the file -> index in the profile */
  uint64_t string_count;
  uint32_t *modules;
  uint64_t module_count;
  struct profile_frame *frames;
  uint64_t frame_count;
  uint32_t *locations;
  uint64_t location_count;
  uint64_t context_count;
  uint32_t *contexts; /* index in the file -> index in the profile */
  uint32_t main_module;
  uint64_t global_inputs;
};

static int
read_strings (struct reader *r, struct profile *profile, struct incoming *in)
{
  if (get_count (r, 4, "strings", &in->string_count) != 0)
    return -1;
  in->strings = xmalloc (in->string_count * sizeof *in->strings + 1);
  for (uint64_t i = 0; i < in->string_count; i++)
    {
      uint64_t at = r->at;
      if (!left (r, 1, 4))
        return bad (r, at,
                    "expected string %llu of %llu, found the end of "
                    "the section",
                    (unsigned long long) i,
                    (unsigned long long) in->string_count);
      uint32_t length = get_u32 (r);
      if (!left (r, length, 1))
        return bad (r, at, "string %llu of %u bytes runs past the section",
                    (unsigned long long) i, length);
      char *text = xmalloc ((size_t) length + 1);
      memcpy (text, r->data + r->at, length);
      text[length] = '\0';
      r->at += length;
      if (strlen (text) != length)
        {
          free (text);
          return bad (r, at, "string %llu holds a NUL byte",
                      (unsigned long long) i);
        }
      if (i == 0 && length != 0)
        {
          free (text);
          return bad (r, at, "string 0 must be empty");
        }
      in->strings[i] = profile_intern (profile, text);
      free (text);
    }
  if (in->string_count == 0)
    return bad (r, r->at, "the string table must hold the empty string");
  return 0;
}

static int
check_string (struct reader *r, struct incoming *in, uint64_t at,
              uint32_t index, uint32_t *mapped)
{
  if (index >= in->string_count)
    return bad (r, at, "string index %u is past the %llu strings", index,
                (unsigned long long) in->string_count);
  *mapped = in->strings[index];
  return 0;
}

static int
read_modules (struct reader *r, struct profile *profile, struct incoming *in)
{
  if (get_count (r, 40, "modules", &in->module_count) != 0)
    return -1;
  in->modules = xmalloc (in->module_count * sizeof *in->modules + 1);
  for (uint64_t i = 0; i < in->module_count; i++)
    {
      uint64_t at = r->at;
      uint32_t size = get_u32 (r);
      if (size > MEMPROF_RAW_BUILD_ID_MAX)
        return bad (r, at, "build id size %u is over %d", size,
                    MEMPROF_RAW_BUILD_ID_MAX);
      const uint8_t *id = r->data + r->at;
      r->at += MEMPROF_RAW_BUILD_ID_MAX;
      uint32_t path = 0;
      if (check_string (r, in, r->at, get_u32 (r), &path) != 0)
        return -1;
      in->modules[i] = profile_add_module (profile, id, size);
      if (path != 0 && profile->modules[in->modules[i]].path == 0)
        profile->modules[in->modules[i]].path = path;
    }
  if (in->main_module != PROFILE_NO_MODULE)
    {
      if (in->main_module >= in->module_count)
        return bad (r, r->at,
                    "the summary's main module %u is past the %llu "
                    "modules",
                    in->main_module, (unsigned long long) in->module_count);
      profile_note_main_module (profile, in->modules[in->main_module]);
    }
  return 0;
}

static int
read_frames (struct reader *r, struct incoming *in)
{
  if (get_count (r, 32, "frames", &in->frame_count) != 0)
    return -1;
  in->frames = xmalloc (in->frame_count * sizeof *in->frames + 1);
  for (uint64_t i = 0; i < in->frame_count; i++)
    {
      struct profile_frame *frame = &in->frames[i];
      uint64_t at = r->at;
      if (check_string (r, in, at, get_u32 (r), &frame->function) != 0
          || check_string (r, in, at + 4, get_u32 (r), &frame->file) != 0)
        return -1;
      frame->line = get_u32 (r);
      frame->column = get_u32 (r);
      frame->decl_line = get_u32 (r);
      frame->flags = get_u32 (r);
      frame->guid = get_u64 (r);
      if (frame->flags & ~(uint32_t) PROFILE_FRAME_ALL_FLAGS)
        return bad (r, at + 20, "frame flags 0x%x are not known", frame->flags);
    }
  return 0;
}

static int
read_locations (struct reader *r, struct profile *profile, struct incoming *in)
{
  if (get_count (r, 24, "locations", &in->location_count) != 0)
    return -1;
  in->locations = xmalloc (in->location_count * sizeof *in->locations + 1);
  for (uint64_t i = 0; i < in->location_count; i++)
    {
      uint64_t at = r->at;
      uint32_t module = get_u32 (r);
      uint32_t frame_count = get_u32 (r);
      uint64_t address = get_u64 (r);
      uint32_t first_frame = get_u32 (r);
      get_u32 (r);
      if (module != PROFILE_NO_MODULE && module >= in->module_count)
        return bad (r, at, "module %u is past the %llu modules", module,
                    (unsigned long long) in->module_count);
      if (frame_count > 0
          && ((uint64_t) first_frame + frame_count > in->frame_count))
        return bad (r, at + 4, "frames %u to %llu are past the %llu frames",
                    first_frame, (unsigned long long) first_frame + frame_count,
                    (unsigned long long) in->frame_count);
      uint32_t mapped = module == PROFILE_NO_MODULE ? PROFILE_NO_MODULE
                                                    : in->modules[module];
      in->locations[i] = profile_add_location (profile, mapped, address);
      /* The first symbolized copy of a location wins.  */
      if (frame_count > 0
          && profile->locations[in->locations[i]].frame_count == 0)
        profile_set_frames (profile, in->locations[i], in->frames + first_frame,
                            frame_count);
    }
  return 0;
}

static int
read_contexts (struct reader *r, struct profile *profile, struct incoming *in)
{
  uint64_t count;
  uint32_t *locations = NULL;
  size_t capacity = 0;
  if (get_count (r, 8 + MEMPROF_MIB_V4_SIZE + 32, "contexts", &count) != 0)
    return -1;
  in->context_count = count;
  in->contexts = xmalloc (count * sizeof *in->contexts + 1);
  for (uint64_t i = 0; i < count; i++)
    {
      uint64_t at = r->at;
      if (!left (r, 1, 8))
        {
          free (locations);
          return bad (r, at,
                      "expected context %llu of %llu, found the end "
                      "of the section",
                      (unsigned long long) i, (unsigned long long) count);
        }
      uint32_t location_count = get_u32 (r);
      uint32_t flags = get_u32 (r);
      uint64_t padded = (uint64_t) location_count + (location_count % 2);
      if (!left (r, padded, 4) || flags > 3 || flags == 2)
        {
          free (locations);
          return bad (r, at,
                      "context %llu: %u locations (flags %u) do not "
                      "fit the section",
                      (unsigned long long) i, location_count, flags);
        }
      if (location_count > capacity)
        {
          capacity = location_count;
          locations = xrealloc (locations, capacity * sizeof *locations);
        }
      for (uint32_t j = 0; j < location_count; j++)
        {
          uint32_t location = get_u32 (r);
          if (location >= in->location_count)
            {
              free (locations);
              return bad (r, r->at - 4,
                          "context %llu: location %u is past the %llu "
                          "locations",
                          (unsigned long long) i, location,
                          (unsigned long long) in->location_count);
            }
          locations[j] = in->locations[location];
        }
      r->at += (padded - location_count) * 4;
      struct memprof_mib mib;
      if (!left (r, 1, sizeof mib))
        {
          free (locations);
          return bad (r, r->at,
                      "context %llu: expected its MemInfoBlock, "
                      "found the end of the section",
                      (unsigned long long) i);
        }
      memcpy (&mib, r->data + r->at, sizeof mib);
      r->at += sizeof mib;
      const uint64_t *histogram = NULL;
      uint64_t *aligned = NULL;
      if (mib.access_histogram_size > 0)
        {
          if (!left (r, mib.access_histogram_size, 8))
            {
              free (locations);
              return bad (r, r->at - 12,
                          "context %llu: histogram of %u values runs past "
                          "the section",
                          (unsigned long long) i, mib.access_histogram_size);
            }
          aligned = xmalloc (mib.access_histogram_size * sizeof *aligned);
          memcpy (aligned, r->data + r->at,
                  mib.access_histogram_size * sizeof *aligned);
          histogram = aligned;
          r->at += mib.access_histogram_size * 8;
        }
      if (!left (r, 4, 8))
        {
          free (aligned);
          free (locations);
          return bad (r, r->at,
                      "context %llu: expected its side-file data, "
                      "found the end of the section",
                      (unsigned long long) i);
        }
      struct profile_extra extra;
      extra.untouched_allocations = get_u64 (r);
      extra.touched_bytes = get_u64 (r);
      extra.live_allocations = get_u64 (r);
      extra.live_bytes = get_u64 (r);
      extra.access_sample_rate = flags & 2 ? 2 : 0;
      in->contexts[i]
          = profile_add_context (profile, locations, location_count, &mib,
                                 histogram, flags & 1 ? &extra : NULL);
      free (aligned);
    }
  free (locations);
  return 0;
}

/* The heap's peak of the file's runs: folded in as one run's.  */
static int
read_peak (struct reader *r, struct profile *profile, struct incoming *in)
{
  struct profile_peak peak = { 0 };
  uint64_t count;
  if (in->contexts == NULL)
    return bad (r, r->at, "the peak section comes before the contexts");
  if (!left (r, 8, 8))
    return bad (r, r->at, "the peak section is shorter than its 64 bytes");
  peak.runs = get_u64 (r);
  peak.bytes = get_u64 (r);
  peak.blocks = get_u64 (r);
  peak.time_us = get_u64 (r);
  peak.snapshot_bytes = get_u64 (r);
  peak.snapshot_time_us = get_u64 (r);
  peak.duration_us = get_u64 (r);
  peak.sampled = get_u32 (r);
  get_u32 (r);
  if (get_count (r, 24, "contexts live at the peak", &count) != 0)
    return -1;
  uint32_t *contexts = xmalloc (count * sizeof *contexts + 1);
  uint64_t *bytes = xmalloc (count * sizeof *bytes + 1);
  uint64_t *blocks = xmalloc (count * sizeof *blocks + 1);
  int result = 0;
  for (uint64_t i = 0; i < count && result == 0; i++)
    {
      uint32_t context = get_u32 (r);
      get_u32 (r);
      bytes[i] = get_u64 (r);
      blocks[i] = get_u64 (r);
      if (context >= in->context_count)
        result = bad (r, r->at - 24,
                      "peak context %llu: context %u is past the %llu "
                      "contexts",
                      (unsigned long long) i, context,
                      (unsigned long long) in->context_count);
      else
        contexts[i] = in->contexts[context];
    }
  if (result == 0
      && get_count (r, 24 + 16 * PROFILE_PEAK_TOP, "timeline samples",
                    &peak.sample_count)
             != 0)
    result = -1;
  if (result == 0)
    {
      peak.samples = xcalloc (peak.sample_count + 1, sizeof *peak.samples);
      for (size_t i = 0; i < peak.sample_count && result == 0; i++)
        {
          struct profile_peak_sample *sample = &peak.samples[i];
          sample->time_us = get_u64 (r);
          sample->live_bytes = get_u64 (r);
          sample->live_blocks = get_u64 (r);
          for (int k = 0; k < PROFILE_PEAK_TOP; k++)
            {
              uint32_t context = get_u32 (r);
              get_u32 (r);
              sample->top_bytes[k] = get_u64 (r);
              if (context == PROFILE_PEAK_NO_CONTEXT)
                sample->top_context[k] = context;
              else if (context < in->context_count)
                sample->top_context[k] = in->contexts[context];
              else
                result
                    = bad (r, r->at - 16,
                           "timeline sample %zu: context %u is past the "
                           "%llu contexts",
                           i, context, (unsigned long long) in->context_count);
            }
        }
    }
  if (result == 0)
    profile_peak_fold (profile, &peak, contexts, bytes, blocks, count);
  else
    free (peak.samples);
  free (contexts);
  free (bytes);
  free (blocks);
  return result;
}

/* The granules are loaded; of the globals, their symbols (their
   accesses are derived data, made anew from the granules).  */
static int
read_globals (struct reader *r, struct profile *profile, struct incoming *in)
{
  uint64_t count;
  if (!left (r, 1, 8))
    return bad (r, r->at, "expected the count of inputs that counted globals");
  in->global_inputs = get_u64 (r);
  if (get_count (r, 24, "granules", &count) != 0)
    return -1;
  uint32_t previous_module = 0;
  uint64_t previous_address = 0;
  for (uint64_t i = 0; i < count; i++)
    {
      uint64_t at = r->at;
      uint32_t module = get_u32 (r);
      get_u32 (r);
      uint64_t address = get_u64 (r);
      uint64_t accesses = get_u64 (r);
      if (module >= in->module_count)
        return bad (r, at, "granule %llu: module %u is past the %llu modules",
                    (unsigned long long) i, module,
                    (unsigned long long) in->module_count);
      if (address % PROFILE_GRANULE_SIZE != 0
          || (i > 0
              && (module < previous_module
                  || (module == previous_module
                      && address <= previous_address))))
        return bad (r, at + 8,
                    "granule %llu at 0x%llx is not a 64-byte granule after "
                    "the one before",
                    (unsigned long long) i, (unsigned long long) address);
      previous_module = module;
      previous_address = address;
      profile_add_granule (profile, in->modules[module], address, accesses);
    }
  if (get_count (r, 40, "globals", &count) != 0)
    return -1;
  previous_module = 0;
  previous_address = 0;
  for (uint64_t i = 0; i < count; i++)
    {
      uint64_t at = r->at;
      struct profile_global global;
      uint32_t module = get_u32 (r);
      if (check_string (r, in, at + 4, get_u32 (r), &global.name) != 0
          || check_string (r, in, at + 8, get_u32 (r), &global.file) != 0)
        return -1;
      global.flags = get_u32 (r);
      global.address = get_u64 (r);
      global.size = get_u64 (r);
      get_u64 (r); /* its accesses: derived */
      if (module >= in->module_count)
        return bad (r, at, "global %llu: module %u is past the %llu modules",
                    (unsigned long long) i, module,
                    (unsigned long long) in->module_count);
      if (global.name == 0 || global.size == 0
          || (global.flags & ~(uint32_t) PROFILE_GLOBAL_ALL_FLAGS))
        return bad (r, at,
                    "global %llu: no name, no size, or unknown flags 0x%x",
                    (unsigned long long) i, global.flags);
      if (i > 0
          && (module < previous_module
              || (module == previous_module
                  && global.address < previous_address)))
        return bad (r, at + 16, "global %llu is out of order",
                    (unsigned long long) i);
      previous_module = module;
      previous_address = global.address;
      global.module = in->modules[module];
      profile_add_global (profile, &global);
    }
  return 0;
}

/* The zstd frame SRC decompressed, which must give EXPECTED bytes, in a
   buffer (one byte longer, for the reader) that grows with what actually
   comes out: a header that claims gigabytes over a few bytes of data
   costs what the data holds, not what the header says.  NULL with WHY on
   error.  */
static uint8_t *
decompress_payload (const void *src, size_t src_size, uint64_t expected,
                    const char **why)
{
  ZSTD_DCtx *context = ZSTD_createDCtx ();
  size_t capacity = 65536;
  if (capacity > expected)
    capacity = (size_t) expected;
  uint8_t *out = xmalloc (capacity + 1);
  ZSTD_inBuffer in = { src, src_size, 0 };
  ZSTD_outBuffer buffer = { out, capacity, 0 };
  size_t status = 1;
  *why = NULL;
  if (context == NULL)
    {
      free (out);
      *why = "no memory for the decompressor";
      return NULL;
    }
  while (status != 0)
    {
      if (buffer.pos == buffer.size)
        {
          if (buffer.size == expected)
            {
              /* Full, and the frame goes on: more than it said.  */
              uint8_t extra;
              ZSTD_outBuffer probe = { &extra, 1, 0 };
              status = ZSTD_decompressStream (context, &probe, &in);
              if (ZSTD_isError (status))
                *why = ZSTD_getErrorName (status);
              else if (probe.pos != 0)
                *why = "longer than the header says";
              if (*why != NULL || status == 0)
                break;
              if (in.pos == in.size)
                {
                  *why = "the frame is cut short";
                  break;
                }
              continue;
            }
          capacity = buffer.size * 2 < expected ? buffer.size * 2
                                                : (size_t) expected;
          out = xrealloc (out, capacity + 1);
          buffer.dst = out;
          buffer.size = capacity;
        }
      size_t before_in = in.pos, before_out = buffer.pos;
      status = ZSTD_decompressStream (context, &buffer, &in);
      if (ZSTD_isError (status))
        {
          *why = ZSTD_getErrorName (status);
          break;
        }
      if (status != 0 && in.pos == in.size && buffer.pos < buffer.size
          && before_in == in.pos && before_out == buffer.pos)
        {
          *why = "the frame is cut short";
          break;
        }
    }
  if (*why == NULL && buffer.pos != expected)
    *why = "shorter than the header says";
  ZSTD_freeDCtx (context);
  if (*why != NULL)
    {
      free (out);
      return NULL;
    }
  return out;
}

/* The function index is derived data: it is checked, not loaded (the
   writer makes it anew).  */
static int
check_functions (struct reader *r, uint64_t contexts)
{
  uint64_t count, total, entries, previous_guid = 0;
  if (get_count (r, 16, "functions", &count) != 0)
    return -1;
  entries = r->at;
  r->at += count * 16;
  if (get_count (r, 4, "function contexts", &total) != 0)
    return -1;
  for (uint64_t i = 0; i < total; i++)
    {
      uint32_t context = get_u32 (r);
      if (context >= contexts)
        return bad (r, r->at - 4, "function index names context %u of %llu",
                    context, (unsigned long long) contexts);
    }
  if (total % 2 != 0)
    {
      if (!left (r, 1, 4))
        return bad (r, r->at, "expected padding to 8 bytes");
      r->at += 4;
    }
  for (uint64_t i = 0; i < count; i++)
    {
      struct reader entry = *r;
      entry.at = entries + i * 16;
      uint64_t guid = get_u64 (&entry);
      uint32_t first = get_u32 (&entry), size = get_u32 (&entry);
      if ((i > 0 && guid <= previous_guid) || (uint64_t) first + size > total)
        return bad (r, entries + i * 16,
                    "function index entry %llu is out of order or past the "
                    "%llu contexts it indexes",
                    (unsigned long long) i, (unsigned long long) total);
      previous_guid = guid;
    }
  return 0;
}

int
mprof_read (struct profile *profile, const uint8_t *data, size_t size,
            const char *name, char *error, size_t error_size)
{
  uint64_t magic, payload_size, compressed_size;
  uint32_t version;

  if (size < MPROF_HEADER_SIZE)
    {
      snprintf (error, error_size,
                "%s: at byte 0: expected a %d-byte .mprof header, found %zu "
                "bytes",
                name, MPROF_HEADER_SIZE, size);
      return -1;
    }
  memcpy (&magic, data, 8);
  memcpy (&version, data + 8, 4);
  memcpy (&payload_size, data + 16, 8);
  memcpy (&compressed_size, data + 24, 8);
  if (magic != MPROF_MAGIC)
    {
      snprintf (error, error_size, "%s: at byte 0: not a .mprof file", name);
      return -1;
    }
  if (version != MPROF_VERSION)
    {
      snprintf (error, error_size,
                "%s: at byte 8: .mprof version %u is not supported (this "
                "memprof reads version %d)",
                name, version, MPROF_VERSION);
      return -1;
    }
  if (compressed_size != size - MPROF_HEADER_SIZE)
    {
      snprintf (error, error_size,
                "%s: at byte 24: the header says %llu compressed bytes "
                "follow, the file has %zu (truncated or extended?)",
                name, (unsigned long long) compressed_size,
                size - MPROF_HEADER_SIZE);
      return -1;
    }
  if (payload_size > MPROF_MAX_PAYLOAD)
    {
      snprintf (error, error_size,
                "%s: at byte 16: payload size %llu is over the %llu-byte "
                "limit",
                name, (unsigned long long) payload_size,
                (unsigned long long) MPROF_MAX_PAYLOAD);
      return -1;
    }
  /* No zstd block expands more than 32768 times (128 KiB from the 4 bytes
     of an RLE block): a header that claims more is not worth allocating
     the payload for.  */
  if (payload_size / 32768 > compressed_size)
    {
      snprintf (error, error_size,
                "%s: at byte 16: payload size %llu is more than %llu "
                "compressed bytes can hold",
                name, (unsigned long long) payload_size,
                (unsigned long long) compressed_size);
      return -1;
    }
  unsigned long long content
      = ZSTD_getFrameContentSize (data + MPROF_HEADER_SIZE, compressed_size);
  if (content != payload_size)
    {
      snprintf (error, error_size,
                "%s: at byte %d: the compressed payload is not one zstd "
                "frame of %llu bytes",
                name, MPROF_HEADER_SIZE, (unsigned long long) payload_size);
      return -1;
    }
  const char *why = NULL;
  uint8_t *payload = decompress_payload (data + MPROF_HEADER_SIZE,
                                         compressed_size, payload_size, &why);
  if (payload == NULL)
    {
      snprintf (error, error_size,
                "%s: at byte %d: the payload does not decompress: %s", name,
                MPROF_HEADER_SIZE, why);
      return -1;
    }

  struct reader r
      = { payload, payload_size, 0, payload_size, name, error, error_size };
  struct incoming in;
  int result = 0;
  memset (&in, 0, sizeof in);
  /* Sections in order; each required one exactly once, then GLOBALS,
     which only profiles that counted globals have.  */
  static const uint32_t order[]
      = { MPROF_SUMMARY,   MPROF_STRINGS,  MPROF_MODULES,   MPROF_FRAMES,
          MPROF_LOCATIONS, MPROF_CONTEXTS, MPROF_FUNCTIONS, MPROF_GLOBALS };
  const size_t required = 7;
  size_t next = 0;
  while (result == 0 && r.at < payload_size)
    {
      uint64_t at = r.at;
      r.limit = payload_size;
      if (!left (&r, 1, 16))
        {
          result = bad (&r, at,
                        "expected a 16-byte section header, found "
                        "%llu bytes",
                        (unsigned long long) (payload_size - at));
          break;
        }
      uint32_t tag = get_u32 (&r);
      get_u32 (&r);
      uint64_t length = get_u64 (&r);
      if (length > payload_size - r.at)
        {
          result = bad (&r, at + 8,
                        "section %u claims %llu bytes; %llu "
                        "remain",
                        tag, (unsigned long long) length,
                        (unsigned long long) (payload_size - r.at));
          break;
        }
      r.limit = r.at + length;
      if (tag == MPROF_PEAK)
        {
          result = read_peak (&r, profile, &in);
          if (result == 0 && r.at != r.limit)
            result = bad (&r, r.at, "section %u has %llu bytes after its data",
                          tag, (unsigned long long) (r.limit - r.at));
          r.at = r.limit;
          continue;
        }
      if (tag >= 100)
        {
          /* A later version's optional section.  */
          r.at = r.limit;
          continue;
        }
      if (next >= sizeof order / sizeof order[0] || tag != order[next])
        {
          result = bad (&r, at, "expected section %u, found section %u",
                        next < sizeof order / sizeof order[0] ? order[next] : 0,
                        tag);
          break;
        }
      next++;
      switch (tag)
        {
        case MPROF_SUMMARY:
          if (!left (&r, 1, 24))
            result = bad (&r, r.at, "the summary is shorter than 24 bytes");
          else
            {
              in.inputs = get_u64 (&r);
              in.inputs_with_extra = get_u64 (&r);
              in.histogram_granule = get_u32 (&r);
              in.main_module = get_u32 (&r);
            }
          break;
        case MPROF_STRINGS:
          result = read_strings (&r, profile, &in);
          break;
        case MPROF_MODULES:
          result = read_modules (&r, profile, &in);
          break;
        case MPROF_FRAMES:
          result = read_frames (&r, &in);
          break;
        case MPROF_LOCATIONS:
          result = read_locations (&r, profile, &in);
          break;
        case MPROF_CONTEXTS:
          result = read_contexts (&r, profile, &in);
          break;
        case MPROF_FUNCTIONS:
          result = check_functions (&r, in.context_count);
          break;
        case MPROF_GLOBALS:
          result = read_globals (&r, profile, &in);
          break;
        }
      if (result == 0 && r.at != r.limit)
        result = bad (&r, r.at, "section %u has %llu bytes after its data", tag,
                      (unsigned long long) (r.limit - r.at));
      r.at = r.limit;
    }
  if (result == 0 && next < required)
    result = bad (&r, r.at, "the payload ends before section %u", order[next]);
  if (result == 0)
    {
      profile->inputs += in.inputs;
      profile->inputs_with_extra += in.inputs_with_extra;
      profile->global_inputs += in.global_inputs;
      if (in.histogram_granule != 0)
        profile->histogram_granule = in.histogram_granule;
    }
  free (in.strings);
  free (in.modules);
  free (in.frames);
  free (in.locations);
  free (in.contexts);
  free (payload);
  return result;
}
