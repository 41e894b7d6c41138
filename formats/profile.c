/* The analysis's model of a profile: see profile.h.  */

#include "profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* libiberty's MD5 (md5.o of libiberty.a; its header is not installed).  */
extern void *md5_buffer (const char *buffer, size_t length, void *result);

/* ---- Strings ---- */

static bool
string_equals (const void *owner, uint32_t index, const void *key)
{
  const struct profile *profile = owner;
  return strcmp (profile->strings[index], key) == 0;
}

static uint64_t
string_hash (const void *owner, uint32_t index)
{
  const struct profile *profile = owner;
  const char *text = profile->strings[index];
  return hash_bytes (text, strlen (text));
}

uint32_t
profile_intern (struct profile *profile, const char *text)
{
  if (text == NULL || *text == '\0')
    return 0;
  index_table_reserve (&profile->string_index, profile->string_count,
                       string_hash, profile);
  uint32_t *slot = index_table_slot (&profile->string_index,
                                     hash_bytes (text, strlen (text)),
                                     string_equals, profile, text);
  if (*slot != 0)
    return *slot - 1;
  profile->strings
      = array_grow (profile->strings, &profile->string_capacity,
                    profile->string_count, sizeof *profile->strings);
  profile->strings[profile->string_count] = xstrdup (text);
  *slot = (uint32_t) ++profile->string_count;
  return *slot - 1;
}

/* ---- Modules ---- */

uint32_t
profile_add_module (struct profile *profile, const uint8_t *build_id,
                    uint32_t build_id_size)
{
  if (build_id_size > MEMPROF_RAW_BUILD_ID_MAX)
    build_id_size = MEMPROF_RAW_BUILD_ID_MAX;
  for (size_t i = 0; i < profile->module_count; i++)
    if (profile->modules[i].build_id_size == build_id_size
        && memcmp (profile->modules[i].build_id, build_id, build_id_size) == 0)
      return (uint32_t) i;
  profile->modules
      = array_grow (profile->modules, &profile->module_capacity,
                    profile->module_count, sizeof *profile->modules);
  struct profile_module *module = &profile->modules[profile->module_count];
  memset (module, 0, sizeof *module);
  memcpy (module->build_id, build_id, build_id_size);
  module->build_id_size = build_id_size;
  return (uint32_t) profile->module_count++;
}

void
profile_note_main_module (struct profile *profile, uint32_t module)
{
  uint32_t current = profile->main_module;
  if (current == PROFILE_NO_MODULE)
    {
      profile->main_module = module;
      return;
    }
  /* Profiles of different programs: the smaller build id, so that the
     choice does not depend on the order of the inputs.  */
  const struct profile_module *a = &profile->modules[current];
  const struct profile_module *b = &profile->modules[module];
  if (b->build_id_size < a->build_id_size
      || (b->build_id_size == a->build_id_size
          && memcmp (b->build_id, a->build_id, b->build_id_size) < 0))
    profile->main_module = module;
}

/* ---- Locations ---- */

uint64_t
profile_address_hash (uint32_t module, uint64_t address)
{
  return hash_mix (address * 31 + module);
}

static bool
location_equals (const void *owner, uint32_t index, const void *key)
{
  const struct profile *profile = owner;
  const struct profile_address_key *k = key;
  return profile->locations[index].module == k->module
         && profile->locations[index].address == k->address;
}

static uint64_t
location_hash (const void *owner, uint32_t index)
{
  const struct profile *profile = owner;
  return profile_address_hash (profile->locations[index].module,
                               profile->locations[index].address);
}

uint32_t
profile_add_location (struct profile *profile, uint32_t module,
                      uint64_t address)
{
  struct profile_address_key key = { module, address };
  index_table_reserve (&profile->location_index, profile->location_count,
                       location_hash, profile);
  uint32_t *slot = index_table_slot (&profile->location_index,
                                     profile_address_hash (module, address),
                                     location_equals, profile, &key);
  if (*slot != 0)
    return *slot - 1;
  profile->locations
      = array_grow (profile->locations, &profile->location_capacity,
                    profile->location_count, sizeof *profile->locations);
  struct profile_location *location
      = &profile->locations[profile->location_count];
  memset (location, 0, sizeof *location);
  location->module = module;
  location->address = address;
  *slot = (uint32_t) ++profile->location_count;
  return *slot - 1;
}

void
profile_set_frames (struct profile *profile, uint32_t location,
                    const struct profile_frame *frames, uint32_t count)
{
  /* Frames are appended; replaced ones stay behind, unused, until the
     profile is written (the writer keeps only what is referenced).  */
  while (profile->frame_count + count > profile->frame_capacity)
    {
      profile->frame_capacity
          = profile->frame_capacity ? profile->frame_capacity * 2 : 256;
      profile->frames = xrealloc (
          profile->frames, profile->frame_capacity * sizeof *profile->frames);
    }
  memcpy (profile->frames + profile->frame_count, frames,
          count * sizeof *frames);
  profile->locations[location].first_frame = (uint32_t) profile->frame_count;
  profile->locations[location].frame_count = count;
  profile->frame_count += count;
}

/* ---- Contexts ---- */

struct context_key
{
  const uint32_t *locations;
  uint32_t count;
};

static bool
context_equals (const void *owner, uint32_t index, const void *key)
{
  const struct profile *profile = owner;
  const struct context_key *k = key;
  const struct profile_context *context = &profile->contexts[index];
  return context->location_count == k->count
         && (k->count == 0 /* K->LOCATIONS may then be NULL */
             || memcmp (profile_context_locations (profile, context),
                        k->locations, k->count * sizeof *k->locations)
                    == 0);
}

static uint64_t
context_hash (const void *owner, uint32_t index)
{
  const struct profile *profile = owner;
  const struct profile_context *context = &profile->contexts[index];
  return hash_bytes (profile_context_locations (profile, context),
                     context->location_count * sizeof (uint32_t));
}

static uint64_t
later_of (uint64_t a, uint64_t b)
{
  return a > b ? a : b;
}

static uint64_t
earlier_of (uint64_t a, uint64_t b)
{
  return a < b ? a : b;
}

void
profile_mib_combine (struct memprof_mib *a, const struct memprof_mib *b)
{
  if (b->alloc_count == 0)
    return;
  if (a->alloc_count == 0)
    {
      *a = *b;
      return;
    }
  /* The fields of "the last allocation" come from the MIB freed later;
     on a tie, from the one whose (allocation time, CPUs) are greater: a
     maximum over a total order, so the result depends on neither the
     order nor the grouping of the merges.  */
  bool b_is_later = b->dealloc_timestamp != a->dealloc_timestamp
                        ? b->dealloc_timestamp > a->dealloc_timestamp
                    : b->alloc_timestamp != a->alloc_timestamp
                        ? b->alloc_timestamp > a->alloc_timestamp
                    : b->alloc_cpu_id != a->alloc_cpu_id
                        ? b->alloc_cpu_id > a->alloc_cpu_id
                        : b->dealloc_cpu_id > a->dealloc_cpu_id;
  struct memprof_mib result = *a;
  if (b_is_later)
    {
      result.alloc_timestamp = b->alloc_timestamp;
      result.dealloc_timestamp = b->dealloc_timestamp;
      result.alloc_cpu_id = b->alloc_cpu_id;
      result.dealloc_cpu_id = b->dealloc_cpu_id;
    }
  /* Saturating: a sum that wrapped to 0 would read as "no allocations",
     which the next combine skips.  */
  result.alloc_count = a->alloc_count > UINT32_MAX - b->alloc_count
                           ? UINT32_MAX
                           : a->alloc_count + b->alloc_count;
  result.total_access_count = a->total_access_count + b->total_access_count;
  result.min_access_count
      = earlier_of (a->min_access_count, b->min_access_count);
  result.max_access_count = later_of (a->max_access_count, b->max_access_count);
  result.total_size = a->total_size + b->total_size;
  result.min_size = (uint32_t) earlier_of (a->min_size, b->min_size);
  result.max_size = (uint32_t) later_of (a->max_size, b->max_size);
  result.total_lifetime = a->total_lifetime + b->total_lifetime;
  result.min_lifetime
      = (uint32_t) earlier_of (a->min_lifetime, b->min_lifetime);
  result.max_lifetime = (uint32_t) later_of (a->max_lifetime, b->max_lifetime);
  result.num_migrated_cpu = a->num_migrated_cpu + b->num_migrated_cpu;
  result.num_lifetime_overlaps
      = a->num_lifetime_overlaps + b->num_lifetime_overlaps;
  result.num_same_alloc_cpu = a->num_same_alloc_cpu + b->num_same_alloc_cpu;
  result.num_same_dealloc_cpu
      = a->num_same_dealloc_cpu + b->num_same_dealloc_cpu;
  result.data_type_id = later_of (a->data_type_id, b->data_type_id);
  result.total_access_density
      = a->total_access_density + b->total_access_density;
  result.min_access_density
      = (uint32_t) earlier_of (a->min_access_density, b->min_access_density);
  result.max_access_density
      = (uint32_t) later_of (a->max_access_density, b->max_access_density);
  result.total_lifetime_access_density
      = a->total_lifetime_access_density + b->total_lifetime_access_density;
  result.min_lifetime_access_density = (uint32_t) earlier_of (
      a->min_lifetime_access_density, b->min_lifetime_access_density);
  result.max_lifetime_access_density = (uint32_t) later_of (
      a->max_lifetime_access_density, b->max_lifetime_access_density);
  result.access_histogram_size = (uint32_t) later_of (a->access_histogram_size,
                                                      b->access_histogram_size);
  result.access_histogram = 0;
  *a = result;
}

uint32_t
profile_add_context (struct profile *profile, const uint32_t *locations,
                     uint32_t location_count, const struct memprof_mib *mib,
                     const uint64_t *histogram,
                     const struct profile_extra *extra)
{
  struct context_key key = { locations, location_count };
  index_table_reserve (&profile->context_index, profile->context_count,
                       context_hash, profile);
  uint32_t *slot = index_table_slot (
      &profile->context_index,
      hash_bytes (locations, location_count * sizeof *locations),
      context_equals, profile, &key);
  struct profile_context *context;
  if (*slot == 0)
    {
      profile->contexts
          = array_grow (profile->contexts, &profile->context_capacity,
                        profile->context_count, sizeof *profile->contexts);
      context = &profile->contexts[profile->context_count];
      memset (context, 0, sizeof *context);
      /* At least one spare: the array exists even while every context
         is empty.  */
      while (profile->context_location_count + location_count
             >= profile->context_location_capacity)
        {
          profile->context_location_capacity
              = profile->context_location_capacity
                    ? profile->context_location_capacity * 2
                    : 256;
          profile->context_locations = xrealloc (
              profile->context_locations,
              profile->context_location_capacity * sizeof (uint32_t));
        }
      if (location_count > 0) /* LOCATIONS may then be NULL */
        memcpy (profile->context_locations + profile->context_location_count,
                locations, location_count * sizeof *locations);
      context->first_location = (uint32_t) profile->context_location_count;
      context->location_count = location_count;
      profile->context_location_count += location_count;
      context->has_extra = extra != NULL;
      *slot = (uint32_t) ++profile->context_count;
    }
  else
    {
      context = &profile->contexts[*slot - 1];
      if (extra == NULL)
        context->has_extra = 0;
    }

  uint32_t old_size
      = context->histogram ? context->mib.access_histogram_size : 0;
  profile_mib_combine (&context->mib, mib);
  /* The longer histogram's size, taken here: the combined MIB's is not it
     when either MIB counts no allocation (the combine then skips it or
     copies it).  */
  uint32_t size = old_size;
  if (histogram != NULL && mib->access_histogram_size > 0)
    {
      if (mib->access_histogram_size > old_size)
        {
          size = mib->access_histogram_size;
          context->histogram
              = xrealloc (context->histogram, size * sizeof (uint64_t));
          memset (context->histogram + old_size, 0,
                  (size - old_size) * sizeof (uint64_t));
        }
      mib_histogram_merge (context->histogram, histogram,
                           mib->access_histogram_size);
    }
  context->mib.access_histogram_size = size;
  if (extra != NULL)
    {
      context->extra.untouched_allocations += extra->untouched_allocations;
      context->extra.touched_bytes += extra->touched_bytes;
      context->extra.live_allocations += extra->live_allocations;
      context->extra.live_bytes += extra->live_bytes;
      if (extra->access_sample_rate > context->extra.access_sample_rate)
        context->extra.access_sample_rate = extra->access_sample_rate;
    }
  return (uint32_t) (context - profile->contexts);
}

void
profile_keep_contexts (struct profile *profile, const bool *keep)
{
  size_t kept = 0;
  /* The timeline names contexts by index: each old index's new one.  */
  uint32_t *renumber
      = xmalloc ((profile->context_count + 1) * sizeof *renumber);
  for (size_t i = 0; i < profile->context_count; i++)
    if (keep[i])
      {
        renumber[i] = (uint32_t) kept;
        profile->contexts[kept++] = profile->contexts[i];
      }
    else
      {
        renumber[i] = PROFILE_PEAK_NO_CONTEXT;
        free (profile->contexts[i].histogram);
      }
  for (size_t s = 0; s < profile->peak.sample_count; s++)
    for (int t = 0; t < PROFILE_PEAK_TOP; t++)
      {
        uint32_t *top = &profile->peak.samples[s].top_context[t];
        if (*top != PROFILE_PEAK_NO_CONTEXT && *top < profile->context_count)
          *top = renumber[*top];
      }
  free (renumber);
  profile->context_count = kept;
  /* The index maps keys to positions: make it anew.  */
  index_table_free (&profile->context_index);
  for (size_t i = 0; i < kept; i++)
    {
      const struct profile_context *context = &profile->contexts[i];
      struct context_key key = { profile_context_locations (profile, context),
                                 context->location_count };
      index_table_reserve (&profile->context_index, i, context_hash, profile);
      *index_table_slot (
          &profile->context_index,
          hash_bytes (key.locations, key.count * sizeof *key.locations),
          context_equals, profile, &key)
          = (uint32_t) i + 1;
    }
}

/* ---- What LLVM keeps ---- */

bool
profile_is_llvm_runtime_file (const char *file)
{
  const char *base = strrchr (file, '/');
  base = base ? base + 1 : file;
  return strcmp (base, "memprof_malloc_linux.cpp") == 0
         || strcmp (base, "memprof_interceptors.cpp") == 0
         || strcmp (base, "memprof_new_delete.cpp") == 0;
}

bool
profile_location_is_llvm_frame (const struct profile *profile,
                                uint32_t location)
{
  const struct profile_location *where = &profile->locations[location];
  if (where->frame_count == 0 || where->module != profile->main_module)
    return false;
  const struct profile_frame *first = &profile->frames[where->first_frame];
  return !(first->flags & PROFILE_FRAME_NO_DEBUG_INFO)
         && !profile_is_llvm_runtime_file (
             profile_string (profile, first->file));
}

/* ---- The rest ---- */

/* Where SUFFIX begins in NAME[0, LENGTH) when it is its last
   dot-separated part (".llvm.7"), else LENGTH.  */
static size_t
without_suffix (const char *name, size_t length, const char *suffix)
{
  size_t suffix_length = strlen (suffix);
  const char *last_dot = NULL;
  for (size_t i = 0; i < length; i++)
    if (name[i] == '.')
      last_dot = name + i;
  for (size_t at = length; at-- > 0;)
    if (at + suffix_length <= length
        && strncmp (name + at, suffix, suffix_length) == 0)
      return last_dot == name + at + suffix_length - 1 ? at : length;
  return length;
}

size_t
profile_canonical_length (const char *name)
{
  size_t length = strlen (name);
  length = without_suffix (name, length, ".llvm.");
  length = without_suffix (name, length, ".part.");
  return length;
}

uint64_t
profile_guid (const char *linkage_name)
{
  unsigned char digest[16];
  uint64_t guid = 0;
  md5_buffer (linkage_name, profile_canonical_length (linkage_name), digest);
  for (int i = 7; i >= 0; i--)
    guid = (guid << 8) | digest[i];
  return guid;
}

void
profile_init (struct profile *profile)
{
  memset (profile, 0, sizeof *profile);
  profile->strings = xcalloc (16, sizeof *profile->strings);
  profile->string_capacity = 16;
  profile->strings[0] = xstrdup ("");
  profile->string_count = 1;
  profile->main_module = PROFILE_NO_MODULE;
}

void
profile_free (struct profile *profile)
{
  for (size_t i = 0; i < profile->string_count; i++)
    free (profile->strings[i]);
  for (size_t i = 0; i < profile->context_count; i++)
    free (profile->contexts[i].histogram);
  free (profile->strings);
  free (profile->string_index.slots);
  free (profile->modules);
  free (profile->locations);
  free (profile->location_index.slots);
  free (profile->frames);
  free (profile->context_locations);
  free (profile->contexts);
  free (profile->context_index.slots);
  free (profile->granules);
  free (profile->granule_index.slots);
  free (profile->globals);
  free (profile->global_index.slots);
  free (profile->peak.samples);
  memset (profile, 0, sizeof *profile);
}
