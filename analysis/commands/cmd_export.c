/* memprof export: the profiles (merged) in the formats other viewers
   read.

   pprof: a perftools.profiles.Profile message (analysis/pprof.proto),
   packed by protobuf-c and gzipped by zlib, as `go tool pprof',
   Pyroscope and Perfetto read it.  A sample is an allocation context,
   its locations leaf first; a location is a return address of a module
   (a pprof mapping, with its build id and the binary's file name), its
   lines the inline chain, innermost first, as pprof's Line list wants.
   The sample types are Go's heap profile's (alloc_objects, alloc_space,
   inuse_objects, inuse_space: "in use" meaning live at exit, from the
   side file), then the access count and the summed lifetime, and last
   peak_objects and peak_space: what was live at the heap's peak (side
   files of version 3), when the profile has a peak.

   speedscope: its JSON file format, one `sampled' profile per metric,
   stacks root first; speedscope merges them into a flame graph.

   The frames kept are those `memprof show' shows (session_frames), so
   that every viewer agrees with it.  */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "commands.h"
#include "emit.h"
#include "gen/pprof.pb-c.h"
#include "metrics.h"
#include "session.h"
#include "util.h"

static const char usage[]
    = "usage: memprof export --format=FORMAT [options] PROFILE...\n"
      "\n"
      "The allocation contexts of the profiles (merged) for other viewers:\n"
      "  pprof       gzipped profile.proto, for `go tool pprof', Pyroscope,\n"
      "              Perfetto; sample types alloc_objects, alloc_space,\n"
      "              inuse_objects and inuse_space (live at exit: needs the\n"
      "              side file), accesses, lifetime (milliseconds, summed),\n"
      "              peak_objects and peak_space (live at the heap's peak)\n"
      "  speedscope  speedscope's JSON file, one profile per metric (bytes\n"
      "              allocated, allocations, bytes live at exit, accesses)\n"
      "\n"
      "  --format=FORMAT   pprof|speedscope (no default)\n"
      "  --output=FILE     write FILE (default: stdout; pprof is binary and\n"
      "                    is never written to a terminal)\n"
      "  --binary=FILE     symbolize with FILE's DWARF (the profiled program; "
      "give\n"
      "                    shared libraries too, each with --binary)\n"
      "  --no-libraries    do not look for the program's shared libraries\n"
      "\n"
      "Examples:\n"
      "  memprof export --format=pprof --binary=./app --output=app.pb.gz "
      "memprof.profraw.1234\n"
      "  go tool pprof -top -sample_index=alloc_space app.pb.gz\n"
      "  memprof export --format=speedscope --binary=./app "
      "--output=app.speedscope.json \\\n"
      "      memprof.profraw.1234\n";

enum export_format
{
  EXPORT_PPROF,
  EXPORT_SPEEDSCOPE
};

/* ---- The frames a context keeps ---- */

/* Mark in KEPT (one flag per location of CONTEXT) the locations whose
   frames session_frames returned: it returns them in location order,
   each location's frames together and its address on each, and leaves
   out whole locations only.  FRAMES holds COUNT of them.  */
static void
kept_locations (const struct profile *profile,
                const struct profile_context *context,
                const struct view_frame *frames, size_t count, bool *kept)
{
  const uint32_t *locations = profile_context_locations (profile, context);
  size_t f = 0;
  for (uint32_t i = 0; i < context->location_count; i++)
    {
      const struct profile_location *location
          = &profile->locations[locations[i]];
      uint32_t n = location->frame_count ? location->frame_count : 1;
      kept[i] = f + n <= count && frames[f].address == location->address;
      if (kept[i])
        f += n;
    }
}

/* ---- A table of strings (pprof's string_table) ---- */

struct strings
{
  char **items; /* items[0] is "" */
  size_t count, capacity;
  struct index_table index;
};

static uint64_t
string_hash (const void *owner, uint32_t index)
{
  const struct strings *strings = owner;
  return hash_bytes (strings->items[index], strlen (strings->items[index]));
}

static bool
string_equals (const void *owner, uint32_t index, const void *key)
{
  const struct strings *strings = owner;
  return strcmp (strings->items[index], key) == 0;
}

static int64_t
string_index (struct strings *strings, const char *text)
{
  index_table_reserve (&strings->index, strings->count, string_hash, strings);
  uint32_t *slot
      = index_table_slot (&strings->index, hash_bytes (text, strlen (text)),
                          string_equals, strings, text);
  if (*slot != 0)
    return *slot - 1;
  strings->items = array_grow (strings->items, &strings->capacity,
                               strings->count, sizeof *strings->items);
  strings->items[strings->count] = xstrdup (text);
  *slot = (uint32_t) strings->count + 1;
  return (int64_t) strings->count++;
}

static void
strings_free (struct strings *strings)
{
  for (size_t i = 0; i < strings->count; i++)
    free (strings->items[i]);
  free (strings->items);
  index_table_free (&strings->index);
}

/* ---- Functions (pprof's and speedscope's), by name and file ---- */

struct function_key
{
  const char *name, *file;
};

struct functions
{
  struct function_key *items;
  size_t count, capacity;
  struct index_table index;
};

static uint64_t
function_key_hash (const struct function_key *key)
{
  return hash_mix (hash_bytes (key->name, strlen (key->name))
                   ^ hash_bytes (key->file, strlen (key->file)) * 31);
}

static uint64_t
function_hash (const void *owner, uint32_t index)
{
  const struct functions *functions = owner;
  return function_key_hash (&functions->items[index]);
}

static bool
function_equals (const void *owner, uint32_t index, const void *key)
{
  const struct functions *functions = owner;
  const struct function_key *k = key;
  return strcmp (functions->items[index].name, k->name) == 0
         && strcmp (functions->items[index].file, k->file) == 0;
}

/* The index of the function NAME of FILE (both must outlive the table),
   and whether it is new in *ADDED.  */
static uint32_t
function_index (struct functions *functions, const char *name, const char *file,
                bool *added)
{
  struct function_key key = { name, file };
  index_table_reserve (&functions->index, functions->count, function_hash,
                       functions);
  uint32_t *slot
      = index_table_slot (&functions->index, function_key_hash (&key),
                          function_equals, functions, &key);
  *added = *slot == 0;
  if (*slot != 0)
    return *slot - 1;
  functions->items = array_grow (functions->items, &functions->capacity,
                                 functions->count, sizeof *functions->items);
  functions->items[functions->count] = key;
  *slot = (uint32_t) functions->count + 1;
  return (uint32_t) functions->count++;
}

static void
functions_free (struct functions *functions)
{
  free (functions->items);
  index_table_free (&functions->index);
}

/* ---- pprof ---- */

/* The name of the frame that marks folded recursion, as session.c gives
   it.  */
#define FOLD_NAME "[recursion folded]"

/* The sample types, in the order of each sample's values.  */
enum pprof_value
{
  PPROF_ALLOC_OBJECTS,
  PPROF_ALLOC_SPACE,
  PPROF_INUSE_OBJECTS,
  PPROF_INUSE_SPACE,
  PPROF_ACCESSES,
  PPROF_LIFETIME,
  PPROF_PEAK_OBJECTS,
  PPROF_PEAK_SPACE,
  PPROF_VALUE_COUNT
};

static const char *const pprof_value_names[][2]
    = { { "alloc_objects", "count" }, { "alloc_space", "bytes" },
        { "inuse_objects", "count" }, { "inuse_space", "bytes" },
        { "accesses", "count" },      { "lifetime", "milliseconds" },
        { "peak_objects", "count" },  { "peak_space", "bytes" } };

/* Gzip SIZE bytes at DATA into *OUT (malloc'ed); returns its size.  */
static size_t
gzip (const uint8_t *data, size_t size, uint8_t **out)
{
  z_stream stream;
  memset (&stream, 0, sizeof stream);
  /* 15 + 16: a gzip header and trailer around the deflate stream.  */
  if (deflateInit2 (&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
                    Z_DEFAULT_STRATEGY)
      != Z_OK)
    die (1, "export: zlib cannot start (out of memory)");
  size_t capacity = deflateBound (&stream, size) + 64;
  *out = xmalloc (capacity);
  stream.next_in = (Bytef *) data;
  stream.avail_in = (uInt) size;
  stream.next_out = *out;
  stream.avail_out = (uInt) capacity;
  if (deflate (&stream, Z_FINISH) != Z_STREAM_END)
    die (1, "export: zlib could not compress the profile");
  size_t length = stream.total_out;
  deflateEnd (&stream);
  return length;
}

static void
build_id_hex (const struct profile_module *module, char *out)
{
  out[0] = '\0';
  for (uint32_t b = 0; b < module->build_id_size; b++)
    sprintf (out + 2 * b, "%02x", module->build_id[b]);
}

static void
export_pprof (struct session *session, const char *output)
{
  struct profile *profile = &session->profile;
  bool has_accesses = metrics_profile_has_accesses (profile);
  bool has_live = profile->inputs_with_extra > 0;

  struct strings strings = { 0 };
  string_index (&strings, "");
  Perftools__Profiles__Profile message;
  perftools__profiles__profile__init (&message);

  /* The sample types this profile can tell.  */
  size_t value_of[PPROF_VALUE_COUNT];
  size_t type_count = 0;
  Perftools__Profiles__ValueType types[PPROF_VALUE_COUNT];
  Perftools__Profiles__ValueType *type_pointers[PPROF_VALUE_COUNT];
  for (int v = 0; v < PPROF_VALUE_COUNT; v++)
    {
      value_of[v] = SIZE_MAX;
      if ((v == PPROF_INUSE_OBJECTS || v == PPROF_INUSE_SPACE) && !has_live)
        continue;
      if (v == PPROF_ACCESSES && !has_accesses)
        continue;
      if ((v == PPROF_PEAK_OBJECTS || v == PPROF_PEAK_SPACE)
          && profile->peak.runs == 0)
        continue;
      perftools__profiles__value_type__init (&types[type_count]);
      types[type_count].type = string_index (&strings, pprof_value_names[v][0]);
      types[type_count].unit = string_index (&strings, pprof_value_names[v][1]);
      type_pointers[type_count] = &types[type_count];
      value_of[v] = type_count++;
    }
  message.n_sample_type = type_count;
  message.sample_type = type_pointers;
  message.default_sample_type = string_index (&strings, "alloc_space");

  /* Every location's pprof id: its index + 1, or 0 while unused.  */
  uint64_t *location_ids
      = xcalloc (profile->location_count + 1, sizeof *location_ids);
  Perftools__Profiles__Sample *samples
      = xcalloc (profile->context_count + 1, sizeof *samples);
  Perftools__Profiles__Sample **sample_pointers
      = xcalloc (profile->context_count + 1, sizeof *sample_pointers);
  struct view_frame *frames = NULL;
  size_t frame_capacity = 0;
  bool *kept = NULL;
  size_t kept_capacity = 0;
  size_t used_locations = 0;
  for (size_t c = 0; c < profile->context_count; c++)
    {
      const struct profile_context *context = &profile->contexts[c];
      size_t n
          = session_frames (session, context, false, &frames, &frame_capacity);
      if (context->location_count + 1 > kept_capacity)
        {
          kept_capacity = context->location_count + 1;
          kept = xrealloc (kept, kept_capacity * sizeof *kept);
        }
      kept_locations (profile, context, frames, n, kept);
      const uint32_t *locations = profile_context_locations (profile, context);
      Perftools__Profiles__Sample *sample = &samples[c];
      perftools__profiles__sample__init (sample);
      sample->location_id
          = xcalloc (context->location_count + 1, sizeof *sample->location_id);
      for (uint32_t i = 0; i < context->location_count; i++)
        if (kept[i])
          {
            if (location_ids[locations[i]] == 0)
              used_locations++;
            location_ids[locations[i]] = (uint64_t) locations[i] + 1;
            sample->location_id[sample->n_location_id++]
                = location_ids[locations[i]];
          }
      int64_t values[PPROF_VALUE_COUNT]
          = { context->mib.alloc_count,
              (int64_t) context->mib.total_size,
              (int64_t) context->extra.live_allocations,
              (int64_t) context->extra.live_bytes,
              (int64_t) context->mib.total_access_count,
              (int64_t) context->mib.total_lifetime,
              (int64_t) context->peak_blocks,
              (int64_t) context->peak_bytes };
      sample->value = xcalloc (type_count + 1, sizeof *sample->value);
      sample->n_value = type_count;
      for (int v = 0; v < PPROF_VALUE_COUNT; v++)
        if (value_of[v] != SIZE_MAX)
          sample->value[value_of[v]] = values[v];
      sample_pointers[c] = sample;
    }
  message.n_sample = profile->context_count;
  message.sample = sample_pointers;

  /* Mappings: the modules, the program's first; ids are module + 1.  */
  size_t module_count = profile->module_count;
  Perftools__Profiles__Mapping *mappings
      = xcalloc (module_count + 1, sizeof *mappings);
  Perftools__Profiles__Mapping **mapping_pointers
      = xcalloc (module_count + 1, sizeof *mapping_pointers);
  for (size_t m = 0; m < module_count; m++)
    {
      perftools__profiles__mapping__init (&mappings[m]);
      mappings[m].id = m + 1;
    }
  /* Locations, in index order; each widens its mapping's range.  */
  Perftools__Profiles__Location *pprof_locations
      = xcalloc (used_locations + 1, sizeof *pprof_locations);
  Perftools__Profiles__Location **location_pointers
      = xcalloc (used_locations + 1, sizeof *location_pointers);
  struct functions functions = { 0 };
  Perftools__Profiles__Function **function_pointers = NULL;
  size_t function_capacity = 0;
  size_t location_count = 0;
  bool *module_used = xcalloc (module_count + 1, sizeof *module_used);
  for (size_t l = 0; l < profile->location_count; l++)
    {
      if (location_ids[l] == 0)
        continue;
      const struct profile_location *location = &profile->locations[l];
      Perftools__Profiles__Location *out = &pprof_locations[location_count];
      location_pointers[location_count++] = out;
      perftools__profiles__location__init (out);
      out->id = location_ids[l];
      out->address = location->address;
      if (location->module != PROFILE_NO_MODULE)
        {
          Perftools__Profiles__Mapping *mapping = &mappings[location->module];
          module_used[location->module] = true;
          out->mapping_id = mapping->id;
          if (location->address + 1 > mapping->memory_limit)
            mapping->memory_limit = location->address + 1;
          if (location->frame_count > 0)
            {
              mapping->has_functions = true;
              mapping->has_filenames = true;
              mapping->has_line_numbers = true;
              mapping->has_inline_frames |= location->frame_count > 1;
            }
        }
      out->n_line = location->frame_count;
      out->line = xcalloc (location->frame_count + 1, sizeof *out->line);
      for (uint32_t f = 0; f < location->frame_count; f++)
        {
          const struct profile_frame *frame
              = &profile->frames[location->first_frame + f];
          const char *linkage = profile_string (profile, frame->function);
          const char *file = profile_string (profile, frame->file);
          bool added;
          uint32_t function
              = function_index (&functions, linkage, file, &added);
          if (added)
            {
              function_pointers
                  = array_grow (function_pointers, &function_capacity, function,
                                sizeof *function_pointers);
              Perftools__Profiles__Function *pf = xmalloc (sizeof *pf);
              perftools__profiles__function__init (pf);
              pf->id = function + 1;
              pf->name = string_index (
                  &strings, session_demangled (session, frame->function));
              pf->system_name = string_index (&strings, linkage);
              pf->filename = string_index (&strings, file);
              pf->start_line = frame->decl_line;
              function_pointers[function] = pf;
            }
          Perftools__Profiles__Line *line = xmalloc (sizeof *line);
          perftools__profiles__line__init (line);
          line->function_id = function + 1;
          line->line = frame->line;
          out->line[f] = line;
        }
      /* The runtime's mark where recursion was folded: a function of
         that name, as memprof show names it, not an unknown address.  */
      if (location->module == PROFILE_NO_MODULE
          && location->address == MEMPROF_RAW_FOLD_PC
          && location->frame_count == 0)
        {
          bool added;
          uint32_t function
              = function_index (&functions, FOLD_NAME, "", &added);
          if (added)
            {
              function_pointers
                  = array_grow (function_pointers, &function_capacity, function,
                                sizeof *function_pointers);
              Perftools__Profiles__Function *pf = xmalloc (sizeof *pf);
              perftools__profiles__function__init (pf);
              pf->id = function + 1;
              pf->name = string_index (&strings, FOLD_NAME);
              pf->system_name = pf->name;
              function_pointers[function] = pf;
            }
          Perftools__Profiles__Line *line = xmalloc (sizeof *line);
          perftools__profiles__line__init (line);
          line->function_id = function + 1;
          free (out->line);
          out->line = xcalloc (2, sizeof *out->line);
          out->line[0] = line;
          out->n_line = 1;
        }
    }
  message.n_location = location_count;
  message.location = location_pointers;
  message.n_function = functions.count;
  message.function = function_pointers;

  size_t mapping_count = 0;
  for (size_t pass = 0; pass < 2; pass++)
    for (size_t m = 0; m < module_count; m++)
      {
        bool is_main = m == profile->main_module;
        if (!module_used[m] || (pass == 0) != is_main)
          continue;
        char hex[2 * MEMPROF_RAW_BUILD_ID_MAX + 1];
        build_id_hex (&profile->modules[m], hex);
        mappings[m].build_id = string_index (&strings, hex);
        mappings[m].filename = string_index (
            &strings, profile_string (profile, profile->modules[m].path));
        mapping_pointers[mapping_count++] = &mappings[m];
      }
  message.n_mapping = mapping_count;
  message.mapping = mapping_pointers;

  char *comment = xasprintf ("memprof export of %" PRIu64 " profile%s",
                             profile->inputs, profile->inputs == 1 ? "" : "s");
  int64_t comment_index = string_index (&strings, comment);
  free (comment);
  message.n_comment = 1;
  message.comment = &comment_index;
  message.n_string_table = strings.count;
  message.string_table = strings.items;

  size_t packed_size = perftools__profiles__profile__get_packed_size (&message);
  uint8_t *packed = xmalloc (packed_size + 1);
  perftools__profiles__profile__pack (&message, packed);
  uint8_t *compressed;
  size_t compressed_size = gzip (packed, packed_size, &compressed);
  char error[512];
  if (write_file_atomically (output, compressed, compressed_size, error,
                             sizeof error)
      != 0)
    die (1, "export: %s", error);

  free (compressed);
  free (packed);
  for (size_t c = 0; c < profile->context_count; c++)
    {
      free (samples[c].location_id);
      free (samples[c].value);
    }
  free (samples);
  free (sample_pointers);
  for (size_t l = 0; l < location_count; l++)
    {
      for (size_t f = 0; f < pprof_locations[l].n_line; f++)
        free (pprof_locations[l].line[f]);
      free (pprof_locations[l].line);
    }
  free (pprof_locations);
  free (location_pointers);
  for (size_t f = 0; f < functions.count; f++)
    free (function_pointers[f]);
  free (function_pointers);
  functions_free (&functions);
  free (mappings);
  free (mapping_pointers);
  free (module_used);
  free (location_ids);
  free (frames);
  free (kept);
  strings_free (&strings);
}

/* ---- speedscope ---- */

enum speedscope_metric
{
  SPEEDSCOPE_BYTES,
  SPEEDSCOPE_ALLOCS,
  SPEEDSCOPE_LIVE,
  SPEEDSCOPE_ACCESSES,
  SPEEDSCOPE_METRIC_COUNT
};

static const char *const speedscope_names[]
    = { "bytes allocated", "allocations", "bytes live at exit", "accesses" };
static const char *const speedscope_units[]
    = { "bytes", "none", "bytes", "none" };

static uint64_t
speedscope_value (const struct profile_context *context,
                  enum speedscope_metric metric)
{
  switch (metric)
    {
    case SPEEDSCOPE_BYTES:
      return context->mib.total_size;
    case SPEEDSCOPE_ALLOCS:
      return context->mib.alloc_count;
    case SPEEDSCOPE_LIVE:
      return context->extra.live_bytes;
    case SPEEDSCOPE_ACCESSES:
    case SPEEDSCOPE_METRIC_COUNT:
      break;
    }
  return context->mib.total_access_count;
}

static void
export_speedscope (struct session *session, const char *output,
                   const char *title)
{
  struct profile *profile = &session->profile;
  bool has_accesses = metrics_profile_has_accesses (profile);
  bool has_live = profile->inputs_with_extra > 0;

  /* Each context's stack of frame indices, root first.  */
  struct functions functions = { 0 };
  uint32_t **stacks = xcalloc (profile->context_count + 1, sizeof *stacks);
  size_t *depths = xcalloc (profile->context_count + 1, sizeof *depths);
  struct view_frame *frames = NULL;
  size_t frame_capacity = 0;
  char *text = NULL;
  size_t text_size = 0;
  FILE *out = open_memstream (&text, &text_size);
  if (out == NULL)
    die (1, "export: out of memory");
  fprintf (out, "{\"$schema\": "
                "\"https://www.speedscope.app/file-format-schema.json\",\n"
                " \"exporter\": \"memprof export (GCC MemProf)\",\n"
                " \"name\": ");
  emit_json_string (out, title);
  fprintf (out, ",\n \"activeProfileIndex\": 0,\n"
                " \"shared\": {\"frames\": [");
  for (size_t c = 0; c < profile->context_count; c++)
    {
      size_t n = session_frames (session, &profile->contexts[c], false, &frames,
                                 &frame_capacity);
      stacks[c] = xcalloc (n + 1, sizeof *stacks[c]);
      depths[c] = n;
      for (size_t i = 0; i < n; i++)
        {
          const struct view_frame *frame = &frames[n - 1 - i];
          bool added;
          /* Names live as long as the session: profile strings, the
             session's demangled names, or the unsymbolized address
             names, which are interned for that.  */
          const char *name
              = frame->function != NULL
                    ? frame->name
                    : profile_string (profile,
                                      profile_intern (profile, frame->name));
          uint32_t index
              = function_index (&functions, name, frame->file, &added);
          if (added)
            {
              fprintf (out, "%s\n   {\"name\": ", index ? "," : "");
              emit_json_string (out, name);
              if (frame->file[0] != '\0')
                {
                  fprintf (out, ", \"file\": ");
                  emit_json_string (out, frame->file);
                }
              fprintf (out, "}");
            }
          stacks[c][i] = index;
        }
    }
  fprintf (out, "]},\n \"profiles\": [");
  bool first_profile = true;
  for (int m = 0; m < SPEEDSCOPE_METRIC_COUNT; m++)
    {
      if ((m == SPEEDSCOPE_LIVE && !has_live)
          || (m == SPEEDSCOPE_ACCESSES && !has_accesses))
        continue;
      uint64_t total = 0;
      for (size_t c = 0; c < profile->context_count; c++)
        total += speedscope_value (&profile->contexts[c],
                                   (enum speedscope_metric) m);
      fprintf (out, "%s\n  {\"type\": \"sampled\", \"name\": ",
               first_profile ? "" : ",");
      first_profile = false;
      emit_json_string (out, speedscope_names[m]);
      fprintf (out,
               ", \"unit\": \"%s\", \"startValue\": 0, \"endValue\": %" PRIu64
               ",\n   \"samples\": [",
               speedscope_units[m], total);
      bool first = true;
      for (size_t c = 0; c < profile->context_count; c++)
        {
          if (speedscope_value (&profile->contexts[c],
                                (enum speedscope_metric) m)
              == 0)
            continue;
          fprintf (out, "%s[", first ? "" : ", ");
          first = false;
          for (size_t i = 0; i < depths[c]; i++)
            fprintf (out, "%s%u", i ? ", " : "", stacks[c][i]);
          fprintf (out, "]");
        }
      fprintf (out, "],\n   \"weights\": [");
      first = true;
      for (size_t c = 0; c < profile->context_count; c++)
        {
          uint64_t value = speedscope_value (&profile->contexts[c],
                                             (enum speedscope_metric) m);
          if (value == 0)
            continue;
          fprintf (out, "%s%" PRIu64, first ? "" : ", ", value);
          first = false;
        }
      fprintf (out, "]}");
    }
  fprintf (out, "]\n}\n");
  if (fclose (out) != 0)
    die (1, "export: out of memory");
  char error[512];
  if (write_file_atomically (output, text, text_size, error, sizeof error) != 0)
    die (1, "export: %s", error);
  free (text);
  for (size_t c = 0; c < profile->context_count; c++)
    free (stacks[c]);
  free (stacks);
  free (depths);
  free (frames);
  functions_free (&functions);
}

int
cmd_export (int argc, char **argv)
{
  if (command_help_requested (argc, argv))
    {
      fputs (usage, stdout);
      return 0;
    }
  struct session session;
  session_init (&session);
  int format = -1;
  const char *output = "-";
  char **inputs = xcalloc ((size_t) argc, sizeof *inputs);
  int input_count = 0;
  for (int i = 1; i < argc; i++)
    {
      const char *arg = argv[i];
      if (session_option (&session, argc, argv, &i))
        continue;
      if (strncmp (arg, "--format=", 9) == 0)
        {
          static const char *const formats[] = { "pprof", "speedscope", NULL };
          format = command_choice ("export", "format", arg + 9, formats);
        }
      else if (strncmp (arg, "--output=", 9) == 0 && arg[9] != '\0')
        output = arg + 9;
      else if (strcmp (arg, "--") == 0)
        while (++i < argc)
          inputs[input_count++] = argv[i];
      else if (arg[0] == '-' && arg[1] != '\0')
        command_usage_error ("export", "unknown option '%s'", arg);
      else
        inputs[input_count++] = argv[i];
    }
  if (format < 0)
    command_usage_error ("export", "no --format given (pprof or speedscope)");
  if (input_count == 0)
    command_usage_error ("export", "no profile given");
  if (format == EXPORT_PPROF && strcmp (output, "-") == 0
      && isatty (STDOUT_FILENO))
    command_usage_error ("export", "a pprof profile is gzipped protobuf, "
                                   "not for a terminal: give --output=FILE");

  session_load (&session, inputs, input_count, false);
  session_symbolize (&session);
  if (format == EXPORT_PPROF)
    export_pprof (&session, output);
  else
    export_speedscope (&session, output, inputs[0]);
  free (inputs);
  session_free (&session);
  return 0;
}
