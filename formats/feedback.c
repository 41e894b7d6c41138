/* Reading a profile for feedback: see feedback.h.  */

#include "feedback.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "globals.h"
#include "llvmindexed.h"
#include "mibfields.h"
#include "mprof.h"
#include "profile.h"
#include "util.h"

const struct feedback_thresholds feedback_llvm_thresholds = {
  .cold_density = 0.05,
  .cold_lifetime_ms = 200 * 1000.0,
  .hot_density = 1000,
};

void
feedback_init (struct feedback *feedback)
{
  memset (feedback, 0, sizeof *feedback);
  feedback->strings = xmalloc (64);
  feedback->strings[0] = '\0';
  feedback->strings_size = 1;
  feedback->strings_capacity = 64;
}

void
feedback_free (struct feedback *feedback)
{
  free (feedback->frames);
  free (feedback->contexts);
  free (feedback->globals);
  free (feedback->strings);
  memset (feedback, 0, sizeof *feedback);
}

static void *
room (void *items, size_t *capacity, size_t needed, size_t size)
{
  if (needed <= *capacity)
    return items;
  size_t grown = *capacity ? *capacity : 16;
  while (grown < needed)
    grown *= 2;
  *capacity = grown;
  return xrealloc (items, grown * size);
}

static uint32_t
add_string (struct feedback *feedback, const char *text, size_t length)
{
  if (length == 0)
    return 0;
  feedback->strings = room (feedback->strings, &feedback->strings_capacity,
                            feedback->strings_size + length + 1, 1);
  uint32_t offset = (uint32_t) feedback->strings_size;
  memcpy (feedback->strings + offset, text, length);
  feedback->strings[offset + length] = '\0';
  feedback->strings_size += length + 1;
  return offset;
}

static struct feedback_frame *
add_frame (struct feedback *feedback)
{
  feedback->frames = room (feedback->frames, &feedback->frame_capacity,
                           feedback->frame_count + 1, sizeof *feedback->frames);
  struct feedback_frame *frame = &feedback->frames[feedback->frame_count++];
  memset (frame, 0, sizeof *frame);
  return frame;
}

static void
add_context (struct feedback *feedback, uint32_t first_frame,
             uint32_t frame_count, const struct memprof_mib *mib)
{
  feedback->contexts
      = room (feedback->contexts, &feedback->context_capacity,
              feedback->context_count + 1, sizeof *feedback->contexts);
  struct feedback_context *context
      = &feedback->contexts[feedback->context_count++];
  context->first_frame = first_frame;
  context->frame_count = frame_count;
  context->mib = *mib;
}

/* ---- From a .mprof file ---- */

/* The program's globals, when its profiles counted them: the main
   module's, with their accesses.  */
static void
from_profile_globals (struct feedback *feedback, const struct profile *profile)
{
  if (profile->global_inputs == 0 || profile->global_count == 0)
    return;
  uint64_t *accesses = xmalloc (profile->global_count * sizeof *accesses);
  profile_global_accesses (profile, accesses);
  for (size_t i = 0; i < profile->global_count; i++)
    {
      const struct profile_global *from = &profile->globals[i];
      if (from->module != profile->main_module)
        continue;
      feedback->globals
          = room (feedback->globals, &feedback->global_capacity,
                  feedback->global_count + 1, sizeof *feedback->globals);
      struct feedback_global *global
          = &feedback->globals[feedback->global_count++];
      const char *name = profile_string (profile, from->name);
      const char *file = profile_string (profile, from->file);
      global->name = add_string (feedback, name, strlen (name));
      global->file = add_string (feedback, file, strlen (file));
      global->size = from->size;
      global->accesses = accesses[i];
    }
  free (accesses);
}

/* Every context's frames that llvm-profdata would keep, as LLVM frames.  */
static void
from_profile (struct feedback *feedback, const struct profile *profile)
{
  for (size_t c = 0; c < profile->context_count; c++)
    {
      const struct profile_context *context = &profile->contexts[c];
      const uint32_t *locations = profile_context_locations (profile, context);
      uint32_t first = (uint32_t) feedback->frame_count;
      for (uint32_t i = 0; i < context->location_count; i++)
        {
          if (!profile_location_is_llvm_frame (profile, locations[i]))
            continue;
          const struct profile_location *location
              = &profile->locations[locations[i]];
          for (uint32_t j = 0; j < location->frame_count; j++)
            {
              const struct profile_frame *from
                  = &profile->frames[location->first_frame + j];
              const char *name = profile_string (profile, from->function);
              struct feedback_frame *frame = add_frame (feedback);
              frame->guid = from->guid;
              frame->line_offset = from->line - from->decl_line;
              frame->column = from->column;
              frame->inlined = (from->flags & PROFILE_FRAME_INLINED) != 0;
              frame->name = add_string (feedback, name,
                                        profile_canonical_length (name));
              if (frame->column != 0)
                feedback->has_columns = true;
            }
        }
      uint32_t count = (uint32_t) feedback->frame_count - first;
      if (count > 0)
        add_context (feedback, first, count, &context->mib);
    }
  from_profile_globals (feedback, profile);
}

/* ---- From llvm-profdata's YAML ---- */

struct yaml
{
  const char *name;
  const char *text, *end;
  size_t line_number;
  char *error;
  size_t error_size;
};

static int
yaml_error (struct yaml *y, const char *format, ...)
{
  char detail[300];
  va_list args;
  va_start (args, format);
  vsnprintf (detail, sizeof detail, format, args);
  va_end (args);
  snprintf (y->error, y->error_size, "%s: line %zu: %s", y->name,
            y->line_number, detail);
  return -1;
}

/* An unsigned number that is all of [TEXT, END).  */
static bool
parse_number (const char *text, const char *end, uint64_t *value)
{
  if (text == end)
    return false;
  uint64_t result = 0;
  for (const char *p = text; p < end; p++)
    {
      if (*p < '0' || *p > '9')
        return false;
      unsigned digit = (unsigned) (*p - '0');
      if (result > (UINT64_MAX - digit) / 10)
        return false;
      result = result * 10 + digit;
    }
  *value = result;
  return true;
}

enum yaml_state
{
  YAML_OUTSIDE,     /* before Records, or in Summary/Segments */
  YAML_RECORDS,     /* between records */
  YAML_ALLOC_SITES, /* in AllocSites */
  YAML_CALLSTACK,   /* in a Callstack */
  YAML_MIB,         /* in a MemInfoBlock */
  YAML_CALL_SITES   /* in CallSites: skipped */
};

/* The alloc site being read.  */
struct site
{
  bool open;
  uint32_t first_frame;
  struct memprof_mib mib;
  size_t mib_fields; /* how many were given */
};

/* Keep the site just read: once, in the record of its leaf function (LLVM
   lists it also under every function it was inlined into).  */
static int
close_site (struct yaml *y, struct feedback *feedback, struct site *site,
            uint64_t record_guid)
{
  if (!site->open)
    return 0;
  site->open = false;
  uint32_t count = (uint32_t) feedback->frame_count - site->first_frame;
  if (count == 0)
    return yaml_error (y, "an alloc site without a Callstack frame");
  if (site->mib_fields == 0)
    return yaml_error (y, "an alloc site without a MemInfoBlock");
  /* Hand-written profiles may name functions without their GUIDs.  */
  for (uint32_t i = site->first_frame; i < feedback->frame_count; i++)
    {
      struct feedback_frame *frame = &feedback->frames[i];
      if (frame->guid == 0 && frame->name != 0)
        frame->guid = profile_guid (feedback_string (feedback, frame->name));
    }
  if (record_guid == 0)
    record_guid = feedback->frames[site->first_frame].guid;
  if (feedback->frames[site->first_frame].guid != record_guid)
    {
      feedback->frame_count = site->first_frame;
      return 0;
    }
  add_context (feedback, site->first_frame, count, &site->mib);
  return 0;
}

static int
from_yaml (struct feedback *feedback, struct yaml *y)
{
  enum yaml_state state = YAML_OUTSIDE;
  struct site site = { 0 };
  uint64_t record_guid = 0;
  struct feedback_frame *frame = NULL;
  bool seen_header = false, seen_records = false;
  /* The columns of the dashes that start a record, an alloc site and a
     frame: those of the "Records:", "AllocSites:" and "Callstack:" keys.  */
  size_t records_indent = 0, alloc_indent = 0, callstack_indent = 0;

  for (const char *line = y->text; line < y->end;)
    {
      const char *newline = memchr (line, '\n', (size_t) (y->end - line));
      const char *stop = newline ? newline : y->end;
      const char *next = newline ? newline + 1 : y->end;
      y->line_number++;
      const char *start = line, *p = line;
      while (p < stop && *p == ' ')
        p++;
      const char *end = stop;
      while (end > p && (end[-1] == ' ' || end[-1] == '\r'))
        end--;
      line = next;
      if (p == end || *p == '#')
        continue;
      if (memchr (p, '\0', (size_t) (end - p)) != NULL)
        return yaml_error (y, "a NUL byte: not a YAML profile");
      /* The document's start, which llvm-profdata 21 writes before its
         summary (comments) and the header.  */
      if (!seen_header && end - p == 3 && memcmp (p, "---", 3) == 0)
        continue;
      if (!seen_header)
        {
          if ((size_t) (end - p) != 15
              || memcmp (p, "MemprofProfile:", 15) != 0)
            return yaml_error (y, "expected 'MemprofProfile:' (the YAML of "
                                  "llvm-profdata show --memory)");
          seen_header = true;
          continue;
        }
      if (*p == '-')
        {
          if (end - p != 1)
            return yaml_error (y, "expected '-' alone on its line");
          size_t column = (size_t) (p - start);
          if (state != YAML_OUTSIDE && column <= records_indent)
            {
              /* A new record.  */
              if (close_site (y, feedback, &site, record_guid) != 0)
                return -1;
              state = YAML_RECORDS;
              record_guid = 0;
            }
          else if ((state == YAML_ALLOC_SITES || state == YAML_MIB
                    || state == YAML_CALLSTACK)
                   && column == alloc_indent)
            {
              /* A new alloc site: the one before ends.  */
              if (close_site (y, feedback, &site, record_guid) != 0)
                return -1;
              site.open = true;
              site.first_frame = (uint32_t) feedback->frame_count;
              memset (&site.mib, 0, sizeof site.mib);
              site.mib_fields = 0;
              state = YAML_ALLOC_SITES;
            }
          else if (state == YAML_CALLSTACK && column == callstack_indent)
            frame = add_frame (feedback);
          else if (state != YAML_CALL_SITES && state != YAML_RECORDS
                   && state != YAML_OUTSIDE)
            return yaml_error (y, "a '-' where none belongs");
          continue;
        }
      const char *colon = memchr (p, ':', (size_t) (end - p));
      if (colon == NULL)
        return yaml_error (y, "expected 'Key: value'");
      size_t key_length = (size_t) (colon - p);
      const char *value = colon + 1;
      while (value < end && *value == ' ')
        value++;
#define KEY(text)                                                              \
  (key_length == sizeof text - 1 && memcmp (p, text, key_length) == 0)
      size_t column = (size_t) (p - start);
      if (KEY ("Records"))
        {
          state = YAML_RECORDS;
          seen_records = true;
          records_indent = column;
          continue;
        }
      if (state == YAML_OUTSIDE)
        continue;
      if (KEY ("FunctionGUID"))
        {
          if (close_site (y, feedback, &site, record_guid) != 0)
            return -1;
          if (!parse_number (value, end, &record_guid))
            return yaml_error (y, "FunctionGUID is not a number");
          state = YAML_RECORDS;
        }
      else if (KEY ("AllocSites"))
        {
          if (close_site (y, feedback, &site, record_guid) != 0)
            return -1;
          state = YAML_ALLOC_SITES;
          alloc_indent = column;
        }
      else if (KEY ("CallSites"))
        {
          if (close_site (y, feedback, &site, record_guid) != 0)
            return -1;
          state = YAML_CALL_SITES;
        }
      else if (state == YAML_CALL_SITES)
        continue;
      else if (KEY ("Callstack"))
        {
          if (!site.open)
            return yaml_error (y, "a Callstack outside an alloc site");
          state = YAML_CALLSTACK;
          callstack_indent = column;
          frame = NULL;
        }
      else if (KEY ("MemInfoBlock"))
        {
          if (!site.open)
            return yaml_error (y, "a MemInfoBlock outside an alloc site");
          state = YAML_MIB;
        }
      else if (state == YAML_CALLSTACK)
        {
          uint64_t number = 0;
          if (frame == NULL)
            return yaml_error (y, "a frame field before the frame's '-'");
          if (KEY ("SymbolName"))
            frame->name = add_string (feedback, value, (size_t) (end - value));
          else if (!parse_number (value, end, &number))
            return yaml_error (y, "expected a number after '%.*s:'",
                               (int) key_length, p);
          else if (KEY ("Function"))
            frame->guid = number;
          else if (KEY ("LineOffset"))
            frame->line_offset = (uint32_t) number;
          else if (KEY ("Column"))
            {
              frame->column = (uint32_t) number;
              if (number != 0)
                feedback->has_columns = true;
            }
          else if (KEY ("Inline"))
            {
              if (number > 1)
                return yaml_error (y, "Inline must be 0 or 1");
              frame->inlined = (uint32_t) number;
            }
          else
            return yaml_error (y, "unknown frame field '%.*s'",
                               (int) key_length, p);
        }
      else if (state == YAML_MIB)
        {
          if (KEY ("AccessHistogram") || KEY ("AccessHistogramValues"))
            continue;
          size_t field = 0;
          while (field < mib_field_count
                 && !(strlen (mib_field_name (field)) == key_length
                      && memcmp (mib_field_name (field), p, key_length) == 0))
            field++;
          uint64_t number;
          if (field == mib_field_count)
            return yaml_error (y, "unknown MemInfoBlock field '%.*s'",
                               (int) key_length, p);
          if (!parse_number (value, end, &number))
            return yaml_error (y, "expected a number after '%.*s:'",
                               (int) key_length, p);
          /* The histogram's values are not kept.  */
          if (strcmp (mib_field_name (field), "AccessHistogramSize") == 0)
            number = 0;
          mib_field_set (&site.mib, field, number);
          site.mib_fields++;
        }
      else
        return yaml_error (y, "unexpected '%.*s:' here", (int) key_length, p);
#undef KEY
    }
  if (close_site (y, feedback, &site, record_guid) != 0)
    return -1;
  if (!seen_records)
    return yaml_error (y, "the end of the file, and no 'Records:'");
  return 0;
}

/* ---- Either ---- */

int
feedback_load_buffer (struct feedback *feedback, const uint8_t *data,
                      size_t size, const char *name, char *error,
                      size_t error_size)
{
  uint64_t magic = 0;
  if (size >= sizeof magic)
    memcpy (&magic, data, sizeof magic);
  if (magic == MPROF_MAGIC)
    {
      struct profile profile;
      profile_init (&profile);
      int result = mprof_read (&profile, data, size, name, error, error_size);
      if (result == 0)
        from_profile (feedback, &profile);
      profile_free (&profile);
      return result;
    }
  if (llvm_indexed_profile_explain (data, size, name, error, error_size))
    return -1;
  struct yaml y = { name,  (const char *) data, (const char *) data + size, 0,
                    error, error_size };
  return from_yaml (feedback, &y);
}

int
feedback_load (struct feedback *feedback, const char *path, char *error,
               size_t error_size)
{
  struct mapped_file file;
  if (map_file (path, &file, error, error_size) != 0)
    return -1;
  int result = feedback_load_buffer (feedback, file.data, file.size, path,
                                     error, error_size);
  unmap_file (&file);
  return result;
}

/* ---- Classification ---- */

double
feedback_density (const struct feedback_context *context)
{
  double count = context->mib.alloc_count ? context->mib.alloc_count : 1;
  return (double) context->mib.total_lifetime_access_density / count / 100.0;
}

double
feedback_lifetime_ms (const struct feedback_context *context)
{
  double count = context->mib.alloc_count ? context->mib.alloc_count : 1;
  return (double) context->mib.total_lifetime / count;
}

enum feedback_class
feedback_classify (const struct feedback_context *context,
                   const struct feedback_thresholds *t)
{
  double density = feedback_density (context);
  if (density < t->cold_density
      && feedback_lifetime_ms (context) >= t->cold_lifetime_ms)
    return FEEDBACK_COLD;
  if (density > t->hot_density)
    return FEEDBACK_HOT;
  return FEEDBACK_NOT_COLD;
}

const char *
feedback_class_name (enum feedback_class class_)
{
  switch (class_)
    {
    case FEEDBACK_COLD:
      return "cold";
    case FEEDBACK_HOT:
      return "hot";
    default:
      return "notcold";
    }
}

/* ---- Thresholds that fit the run ---- */

const struct feedback_run_thresholds feedback_default_run_thresholds = {
  .cold_lifetime_share = 0.10,
  .cold_density_ratio = 0.25,
  .hot_density_ratio = 4,
};

struct weighted_density
{
  double density;
  double bytes;
};

static int
compare_densities (const void *a, const void *b)
{
  double x = ((const struct weighted_density *) a)->density;
  double y = ((const struct weighted_density *) b)->density;
  return x < y ? -1 : x > y;
}

void
feedback_measure_run (const struct feedback *feedback, struct feedback_run *run)
{
  memset (run, 0, sizeof *run);
  if (feedback->context_count == 0)
    return;
  /* The MIBs' timestamps are milliseconds from the runtime's start; a
     context keeps those of its last block.  */
  uint32_t first = UINT32_MAX, last = 0, longest = 0;
  double total_bytes = 0;
  struct weighted_density *densities
      = xmalloc (feedback->context_count * sizeof *densities);
  for (size_t i = 0; i < feedback->context_count; i++)
    {
      const struct memprof_mib *mib = &feedback->contexts[i].mib;
      if (mib->alloc_timestamp < first)
        first = mib->alloc_timestamp;
      if (mib->dealloc_timestamp > last)
        last = mib->dealloc_timestamp;
      if (mib->max_lifetime > longest)
        longest = mib->max_lifetime;
      /* Bytes never accessed are below any positive threshold: the
         median is that of the accessed ones.  */
      densities[i].density = feedback_density (&feedback->contexts[i]);
      densities[i].bytes
          = densities[i].density > 0 ? (double) mib->total_size : 0;
      total_bytes += densities[i].bytes;
    }
  run->length_ms = last > first ? last - first : 0;
  if (longest > run->length_ms)
    run->length_ms = longest;
  qsort (densities, feedback->context_count, sizeof *densities,
         compare_densities);
  double bytes = 0;
  for (size_t i = 0; i < feedback->context_count; i++)
    {
      bytes += densities[i].bytes;
      if (total_bytes > 0 && bytes * 2 >= total_bytes)
        {
          run->median_density = densities[i].density;
          break;
        }
    }
  free (densities);
}

void
feedback_fit_thresholds (const struct feedback_run *run,
                         const struct feedback_run_thresholds *relative,
                         struct feedback_thresholds *out)
{
  out->cold_lifetime_ms = relative->cold_lifetime_share * run->length_ms;
  out->cold_density = relative->cold_density_ratio * run->median_density;
  out->hot_density = relative->hot_density_ratio * run->median_density;
}
