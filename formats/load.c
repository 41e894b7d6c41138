/* Loading files into a profile: raw profiles (with their side files) and
   .mprof files, told apart by their magic.  */

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "extraformat.h"
#include "feedback.h"
#include "globals.h"
#include "llvmindexed.h"
#include "mprof.h"
#include "profile.h"
#include "rawreader.h"
#include "util.h"

/* The records of a side file that belongs to the profile it sits next
   to, sorted by stack id, and (version 2) its global records.  */
struct side_file
{
  struct memprof_extra_record *records;
  size_t count;
  uint32_t reason;  /* enum memprof_extra_reason */
  bool has_globals; /* version 2: the accesses to globals were counted */
  const struct memprof_extra_global *globals; /* in the side file's bytes */
  size_t global_count;
  /* Version 3: the heap's peak, its contexts and timeline, in the side
     file's bytes.  */
  bool has_peak;
  struct memprof_extra_peak peak;
  const uint8_t *peak_contexts, *samples;
};

static int
compare_extra_ids (const void *a, const void *b)
{
  uint64_t x = ((const struct memprof_extra_record *) a)->stack_id;
  uint64_t y = ((const struct memprof_extra_record *) b)->stack_id;
  return x < y ? -1 : x > y;
}

/* Check the side file of SIZE bytes at DATA against the raw profile of
   PROFILE_SIZE bytes at PROFILE_DATA; fill SIDE when it belongs to it.
   Returns NULL, or what is wrong with it.  */
static const char *
parse_side_file (const uint8_t *data, size_t size, const uint8_t *profile_data,
                 size_t profile_size, struct side_file *side)
{
  struct memprof_extra_header header;
  side->records = NULL;
  side->count = 0;
  side->has_globals = false;
  side->globals = NULL;
  side->global_count = 0;
  side->has_peak = false;
  if (size < sizeof header)
    return "it is shorter than its 64-byte header";
  memcpy (&header, data, sizeof header);
  if (header.magic != MEMPROF_EXTRA_MAGIC)
    return "it does not start with the side file's magic";
  if (header.version != MEMPROF_EXTRA_VERSION
      && header.version != MEMPROF_EXTRA_VERSION_2
      && header.version != MEMPROF_EXTRA_VERSION_1)
    return "its version is not 1, 2 or 3";
  if (header.header_size < sizeof header || header.header_size > size)
    return "its header size is wrong";
  /* Version 1: records only; version 2: records, then globals; version 3:
     then the peak, its contexts and the timeline.  */
  uint64_t body = size - header.header_size;
  uint64_t globals_bytes
      = header.version == MEMPROF_EXTRA_VERSION_1
            ? 0
            : header.global_count * sizeof (struct memprof_extra_global);
  uint64_t peak_bytes = 0;
  if (header.version == MEMPROF_EXTRA_VERSION)
    {
      /* The peak section's header follows the records and globals: its
         counts size the rest.  */
      uint64_t records_bytes
          = header.record_count < body / sizeof (struct memprof_extra_record)
                ? header.record_count * sizeof (struct memprof_extra_record)
                : body;
      uint64_t at
          = records_bytes
            + (header.global_count < body / sizeof (struct memprof_extra_global)
                   ? globals_bytes
                   : body);
      if (at > body || body - at < sizeof side->peak)
        return "its peak section (version 3) is missing or truncated";
      memcpy (&side->peak, data + header.header_size + at, sizeof side->peak);
      uint64_t rest = body - at - sizeof side->peak;
      if (side->peak.context_count
              > rest / sizeof (struct memprof_extra_peak_context)
          || side->peak.sample_count
                 > rest / sizeof (struct memprof_extra_sample)
          || side->peak.context_count
                         * sizeof (struct memprof_extra_peak_context)
                     + side->peak.sample_count
                           * sizeof (struct memprof_extra_sample)
                 != rest)
        return "its peak section's context and sample counts do not match "
               "its size";
      peak_bytes = sizeof side->peak + rest;
    }
  bool counts_fit
      = (header.version == MEMPROF_EXTRA_VERSION_1
         || header.global_count
                <= (body - peak_bytes) / sizeof (struct memprof_extra_global))
        && (body - peak_bytes - globals_bytes)
                   % sizeof (struct memprof_extra_record)
               == 0
        && header.record_count
               == (body - peak_bytes - globals_bytes)
                      / sizeof (struct memprof_extra_record);
  if (!counts_fit)
    return header.version == MEMPROF_EXTRA_VERSION_1
               ? "its record count does not match its size"
               : "its record and global counts do not match its size";
  if (header.profile_size != profile_size
      || header.profile_hash
             != memprof_fnv1a (MEMPROF_FNV_OFFSET, profile_data, profile_size))
    return "it describes another profile (size or hash differ)";
  side->count = header.record_count;
  side->reason = header.reason;
  side->records = xmalloc (side->count * sizeof *side->records + 1);
  memcpy (side->records, data + header.header_size,
          side->count * sizeof *side->records);
  qsort (side->records, side->count, sizeof *side->records, compare_extra_ids);
  if (header.version != MEMPROF_EXTRA_VERSION_1)
    {
      side->has_globals = true;
      side->global_count = header.global_count;
      side->globals
          = (const struct memprof_extra_global *) (data + size - peak_bytes
                                                   - globals_bytes);
    }
  if (peak_bytes > 0)
    {
      side->has_peak = true;
      side->peak_contexts = data + size - peak_bytes + sizeof side->peak;
      side->samples = side->peak_contexts
                      + side->peak.context_count
                            * sizeof (struct memprof_extra_peak_context);
    }
  return NULL;
}

struct raw_load
{
  struct profile *profile;
  struct side_file side;
  bool globals_taken; /* the side file's globals are in: a file with several
                         profiles has one side file */
  bool peak_taken;    /* the same for its peak */
  uint32_t *locations;
  size_t location_capacity;
};

struct id_index
{
  uint64_t stack_id;
  uint32_t context;
};

static int
compare_id_index (const void *a, const void *b)
{
  uint64_t x = ((const struct id_index *) a)->stack_id;
  uint64_t y = ((const struct id_index *) b)->stack_id;
  return x < y ? -1 : x > y;
}

static uint32_t
context_of (const struct id_index *ids, size_t count, uint64_t stack_id)
{
  struct id_index key = { stack_id, 0 };
  const struct id_index *found
      = bsearch (&key, ids, count, sizeof key, compare_id_index);
  return found ? found->context : PROFILE_PEAK_NO_CONTEXT;
}

/* Fold the side file's peak into PROFILE; IDS (COUNT, sorted) map the raw
   profile's stack ids to the profile's contexts.  Records whose stack id
   is not in the profile (a context reset since) are left out.  */
static void
take_peak (struct profile *profile, const struct side_file *side,
           const struct id_index *ids, size_t count)
{
  struct profile_peak peak = { 0 };
  peak.runs = 1;
  peak.bytes = side->peak.peak_bytes;
  peak.blocks = side->peak.peak_blocks;
  peak.time_us = side->peak.peak_time_us;
  peak.snapshot_bytes = side->peak.snapshot_bytes;
  peak.snapshot_time_us = side->peak.snapshot_time_us;
  peak.duration_us = side->peak.now_us;
  peak.sampled = side->peak.sampled;
  peak.sample_count = side->peak.sample_count;
  peak.samples = xcalloc (peak.sample_count + 1, sizeof *peak.samples);
  for (size_t i = 0; i < peak.sample_count; i++)
    {
      struct memprof_extra_sample sample;
      struct profile_peak_sample *to = &peak.samples[i];
      memcpy (&sample, side->samples + i * sizeof sample, sizeof sample);
      to->time_us = sample.time_us;
      to->live_bytes = sample.live_bytes;
      to->live_blocks = sample.live_blocks;
      for (int k = 0; k < PROFILE_PEAK_TOP; k++)
        {
          to->top_context[k] = PROFILE_PEAK_NO_CONTEXT;
          if (k < MEMPROF_EXTRA_SAMPLE_TOP && sample.top[k].stack_id != 0)
            {
              to->top_context[k]
                  = context_of (ids, count, sample.top[k].stack_id);
              to->top_bytes[k] = sample.top[k].bytes;
            }
        }
    }
  size_t n = side->peak.context_count, used = 0;
  uint32_t *contexts = xmalloc (n * sizeof *contexts + 1);
  uint64_t *bytes = xmalloc (n * sizeof *bytes + 1);
  uint64_t *blocks = xmalloc (n * sizeof *blocks + 1);
  for (size_t i = 0; i < n; i++)
    {
      struct memprof_extra_peak_context record;
      memcpy (&record, side->peak_contexts + i * sizeof record, sizeof record);
      uint32_t context = context_of (ids, count, record.stack_id);
      if (context == PROFILE_PEAK_NO_CONTEXT)
        continue;
      contexts[used] = context;
      bytes[used] = record.bytes;
      blocks[used++] = record.blocks;
    }
  profile_peak_fold (profile, &peak, contexts, bytes, blocks, used);
  free (contexts);
  free (bytes);
  free (blocks);
}

/* The module-relative location of PC, as llvm-profdata rebases it: by the
   segment with START < PC <= END.  */
static uint32_t
locate (struct profile *profile, const struct raw_read_profile *raw,
        const uint32_t *modules, uint64_t pc)
{
  for (size_t i = 0; i < raw->segment_count; i++)
    {
      const struct memprof_raw_segment *segment = &raw->segments[i];
      if (segment->start < pc && pc <= segment->end)
        return profile_add_location (profile, modules[i], pc - segment->offset);
    }
  return profile_add_location (profile, PROFILE_NO_MODULE, pc);
}

static int
load_raw_profile (const struct raw_read_profile *raw, void *cookie)
{
  struct raw_load *load = cookie;
  struct profile *profile = load->profile;
  uint32_t *modules = xmalloc (raw->segment_count * sizeof *modules + 1);

  for (size_t i = 0; i < raw->segment_count; i++)
    modules[i] = profile_add_module (profile, raw->segments[i].build_id,
                                     (uint32_t) raw->segments[i].build_id_size);
  if (raw->segment_count > 0)
    profile_note_main_module (profile, modules[0]);
  struct id_index *ids = xmalloc (raw->record_count * sizeof *ids + 1);
  for (size_t i = 0; i < raw->record_count; i++)
    {
      const struct raw_read_record *record = &raw->records[i];
      const struct raw_read_stack *stack
          = raw_read_find_stack (raw, record->id);
      if (stack->depth > load->location_capacity)
        {
          load->location_capacity = stack->depth;
          load->locations = xrealloc (load->locations,
                                      stack->depth * sizeof *load->locations);
        }
      for (uint64_t j = 0; j < stack->depth; j++)
        load->locations[j] = locate (profile, raw, modules, stack->pcs[j]);

      struct profile_extra extra, *extra_pointer = NULL;
      if (load->side.records != NULL)
        {
          struct memprof_extra_record key = { .stack_id = record->id };
          const struct memprof_extra_record *found
              = bsearch (&key, load->side.records, load->side.count, sizeof key,
                         compare_extra_ids);
          memset (&extra, 0, sizeof extra);
          if (found != NULL)
            {
              extra.untouched_allocations = found->untouched_allocations;
              extra.touched_bytes = found->touched_bytes;
              extra.access_sample_rate = found->access_sample_rate;
              /* Live at exit is leaked; live at any other dump is not.  */
              if (load->side.reason == MEMPROF_EXTRA_AT_EXIT)
                {
                  extra.live_allocations = found->live_allocations;
                  extra.live_bytes = found->live_bytes;
                }
            }
          extra_pointer = &extra;
        }
      ids[i].stack_id = record->id;
      ids[i].context = profile_add_context (
          profile, load->locations, (uint32_t) stack->depth, &record->mib,
          record->histogram, extra_pointer);
      if (record->histogram != NULL)
        profile->histogram_granule = 8;
    }
  /* The globals of the program: the module of the first segment.  */
  if (load->side.has_globals && !load->globals_taken && raw->segment_count > 0)
    {
      for (size_t i = 0; i < load->side.global_count; i++)
        {
          struct memprof_extra_global global;
          memcpy (&global, &load->side.globals[i], sizeof global);
          profile_add_granule (profile, modules[0], global.address,
                               global.accesses);
        }
      profile->global_inputs++;
      load->globals_taken = true;
    }
  if (load->side.has_peak && !load->peak_taken)
    {
      qsort (ids, raw->record_count, sizeof *ids, compare_id_index);
      take_peak (profile, &load->side, ids, raw->record_count);
      load->peak_taken = true;
    }
  free (ids);
  profile->inputs++;
  if (load->side.records != NULL)
    profile->inputs_with_extra++;
  free (modules);
  return 0;
}

/* The pseudo module of profiles read from YAML: their frames have no
   addresses, so each location is made from its frames.  */
static const uint8_t yaml_module_id[] = { 'y', 'a', 'm', 'l' };

/* Fold the YAML of `llvm-profdata show --memory' into PROFILE: each alloc
   site a context, each inline chain of frames a location.  */
static int
load_yaml (struct profile *profile, const uint8_t *data, size_t size,
           const char *name, char *error, size_t error_size)
{
  struct feedback feedback;
  feedback_init (&feedback);
  int result
      = feedback_load_buffer (&feedback, data, size, name, error, error_size);
  if (result != 0)
    {
      feedback_free (&feedback);
      return result;
    }
  uint32_t module
      = profile_add_module (profile, yaml_module_id, sizeof yaml_module_id);
  profile_note_main_module (profile, module);
  uint32_t *locations = NULL;
  size_t capacity = 0;
  for (size_t c = 0; c < feedback.context_count; c++)
    {
      const struct feedback_context *context = &feedback.contexts[c];
      const struct feedback_frame *frames
          = feedback.frames + context->first_frame;
      uint32_t count = 0;
      for (uint32_t i = 0; i < context->frame_count;)
        {
          /* One location: the frames up to the first not inlined.  */
          uint32_t end = i;
          while (end + 1 < context->frame_count && frames[end].inlined)
            end++;
          end++;
          uint64_t address = memprof_fnv1a (MEMPROF_FNV_OFFSET, frames + i,
                                            (end - i) * sizeof *frames);
          if (count >= capacity)
            {
              capacity = capacity ? capacity * 2 : 16;
              locations = xrealloc (locations, capacity * sizeof *locations);
            }
          locations[count] = profile_add_location (profile, module, address);
          if (profile->locations[locations[count]].frame_count == 0)
            {
              struct profile_frame converted[64];
              uint32_t n = end - i < 64 ? end - i : 64;
              for (uint32_t j = 0; j < n; j++)
                {
                  const struct feedback_frame *from = &frames[i + j];
                  converted[j].function = profile_intern (
                      profile, feedback_string (&feedback, from->name));
                  converted[j].file = 0;
                  /* No declaration line in LLVM's YAML: the line is the
                     offset.  */
                  converted[j].line = from->line_offset;
                  converted[j].decl_line = 0;
                  converted[j].column = from->column;
                  converted[j].flags = j + 1 < n ? PROFILE_FRAME_INLINED : 0;
                  converted[j].guid = from->guid;
                }
              profile_set_frames (profile, locations[count], converted, n);
            }
          count++;
          i = end;
        }
      profile_add_context (profile, locations, count, &context->mib, NULL,
                           NULL);
    }
  profile->inputs++;
  free (locations);
  feedback_free (&feedback);
  return 0;
}

int
profile_load_buffer (struct profile *profile, const uint8_t *data, size_t size,
                     const char *name, const uint8_t *side_data,
                     size_t side_size, const char *side_name, char *error,
                     size_t error_size)
{
  uint64_t magic = 0;
  int result;
  if (size >= sizeof magic)
    memcpy (&magic, data, sizeof magic);
  if (magic == MPROF_MAGIC)
    return mprof_read (profile, data, size, name, error, error_size);
  if (size >= 15 && memcmp (data, "MemprofProfile:", 15) == 0)
    return load_yaml (profile, data, size, name, error, error_size);
  if (llvm_indexed_profile_explain (data, size, name, error, error_size))
    return -1;
  if (magic != MEMPROF_RAW_MAGIC && size >= sizeof magic)
    {
      snprintf (error, error_size,
                "%s: at byte 0: expected the magic of a raw MemProf profile "
                "(0x%016llx), of a .mprof file (0x%016llx) or "
                "'MemprofProfile:' (llvm-profdata's YAML), found 0x%016llx: "
                "not a memory profile",
                name, (unsigned long long) MEMPROF_RAW_MAGIC,
                (unsigned long long) MPROF_MAGIC, (unsigned long long) magic);
      return -1;
    }
  struct raw_load load;
  memset (&load, 0, sizeof load);
  load.profile = profile;
  if (side_data != NULL)
    {
      const char *problem
          = parse_side_file (side_data, side_size, data, size, &load.side);
      if (problem != NULL)
        warn ("warning: %s: ignored: %s", side_name, problem);
    }
  result = raw_read_each (data, size, name, load_raw_profile, &load, error,
                          error_size);
  free (load.side.records);
  free (load.locations);
  return result;
}

/* The side file of the profile PATH: its name today
   (memprof_extra_path: memprof.profraw.N -> memprof.extra.N), or, when
   only that exists, the name older runtimes gave it, PATH.extra.  */
static char *
side_file_of (const char *path)
{
  size_t size = strlen (path) + sizeof MEMPROF_EXTRA_SUFFIX;
  char *current = xmalloc (size);
  if (memprof_extra_path (path, current, size) >= 0
      && access (current, F_OK) == 0)
    return current;
  char *old = xasprintf ("%s%s", path, MEMPROF_EXTRA_SUFFIX);
  if (access (old, F_OK) == 0)
    {
      free (current);
      return old;
    }
  free (old);
  return current;
}

/* Whether the side file PATH has its profile next to it, under either
   naming: NAME.extra of NAME, or the "extra" of its file name that was
   "profraw".  */
static bool
side_file_has_profile (const char *path)
{
  size_t length = strlen (path), suffix = strlen (MEMPROF_EXTRA_SUFFIX);
  bool found = false;
  if (length > suffix
      && strcmp (path + length - suffix, MEMPROF_EXTRA_SUFFIX) == 0)
    {
      char *profile_path = xasprintf ("%.*s", (int) (length - suffix), path);
      found = access (profile_path, F_OK) == 0;
      free (profile_path);
    }
  const char *slash = strrchr (path, '/');
  const char *name = slash != NULL ? slash + 1 : path;
  const char *last = NULL;
  for (const char *at = strstr (name, "extra"); at != NULL;
       at = strstr (at + 1, "extra"))
    last = at;
  if (!found && last != NULL)
    {
      char *profile_path = xasprintf ("%.*sprofraw%s", (int) (last - path),
                                      path, last + strlen ("extra"));
      found = access (profile_path, F_OK) == 0;
      free (profile_path);
    }
  return found;
}

int
profile_load (struct profile *profile, const char *path, char *error,
              size_t error_size)
{
  struct mapped_file file, side = { NULL, 0 };
  char side_error[512];
  int result;

  if (map_file (path, &file, error, error_size) != 0)
    return -1;
  uint64_t magic = 0;
  if (file.size >= sizeof magic)
    memcpy (&magic, file.data, sizeof magic);
  if (magic == MEMPROF_EXTRA_MAGIC)
    {
      /* A side file named among the inputs (a glob such as *.extra, or
         one of the old PROFILE.extra names): it is read with its profile,
         never alone.  */
      if (!side_file_has_profile (path))
        warn ("warning: %s: a side file without its profile: ignored", path);
      unmap_file (&file);
      return 0;
    }
  char *side_path = side_file_of (path);
  bool has_side
      = magic == MEMPROF_RAW_MAGIC
        && map_file (side_path, &side, side_error, sizeof side_error) == 0;
  result = profile_load_buffer (profile, file.data, file.size, path,
                                has_side ? side.data : NULL, side.size,
                                side_path, error, error_size);
  if (has_side)
    unmap_file (&side);
  free (side_path);
  unmap_file (&file);
  return result;
}
