/* Taking a profile: a snapshot of every context's record plus the blocks
   live at this moment (folded into the snapshot only, so a block still
   live is not counted twice when it is freed later), written as a raw
   profile under a temporary name and renamed into place.  Its side file
   (extraformat.h) is written the same way from the same snapshot, with
   the accesses to the program's globals read at the snapshot
   (globals.c), and renamed into place just before it.  A profile_file
   that names a FIFO or a device (/dev/null) is written in place instead:
   a rename would put a regular file where the device was.  */

#define _GNU_SOURCE
#include "internal.h"
#include "rawwriter.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Room for the histograms of one snapshot (reserved, committed as used). */
#define SNAPSHOT_SCRATCH_SIZE (4UL << 30)
#define WRITE_BUFFER_SIZE (64 * 1024)
#define PATH_BYTES 4096
/* From a signal handler (profile_dump_in_signal): how long to wait for
   a dump another thread is writing, and how many tries a spin lock gets
   before the interrupted thread is taken to hold it.  */
#define SIGNAL_DUMP_LOCK_TRIES 200
#define SIGNAL_DUMP_LOCK_PAUSE_NS 5000000L
#define SIGNAL_SPIN_ATTEMPTS (1UL << 24)

static pthread_mutex_t dump_lock = PTHREAD_MUTEX_INITIALIZER;
uint64_t profile_heap_accesses, profile_live_heap_counters;
static unsigned dump_sequence;
static char write_buffer[WRITE_BUFFER_SIZE];

struct snapshot
{
  struct raw_profile_record *records;
  struct memprof_extra_record *extras; /* one per record, same index */
  size_t count, capacity;
  char *scratch;
  size_t scratch_used;
  uint32_t now, cpu;
  uint64_t live_counters; /* accesses of the blocks live at the snapshot */
  struct memprof_extra_global *globals; /* the program's data granules */
  size_t global_count, global_capacity;
  unsigned long lock_attempts; /* 0: wait for every lock */
  bool incomplete;             /* a lock stayed busy: no profile */
  /* The heap's peak and timeline (peak.c).  */
  struct memprof_extra_peak peak;
  struct memprof_extra_peak_context *peak_contexts;
  size_t peak_capacity;
  const struct memprof_extra_sample *samples;
};

void
profile_fork_prepare (void)
{
  pthread_mutex_lock (&dump_lock);
}

void
profile_fork_parent (void)
{
  pthread_mutex_unlock (&dump_lock);
}

void
profile_fork_child (void)
{
  pthread_mutex_init (&dump_lock, NULL);
  dump_sequence = 0;
}

/* ---- Segments ---- */

struct segment_list
{
  struct memprof_raw_segment *segments;
  size_t count, max;
};

static void
find_build_id (const struct dl_phdr_info *info,
               struct memprof_raw_segment *segment)
{
  for (int i = 0; i < info->dlpi_phnum; i++)
    {
      const ElfW (Phdr) *phdr = &info->dlpi_phdr[i];
      const char *note, *end;
      if (phdr->p_type != PT_NOTE)
        continue;
      note = (const char *) (info->dlpi_addr + phdr->p_vaddr);
      end = note + phdr->p_memsz;
      while (note + sizeof (ElfW (Nhdr)) <= end)
        {
          const ElfW (Nhdr) *nhdr = (const ElfW (Nhdr) *) note;
          const char *name = note + sizeof *nhdr;
          const char *desc = name + ROUND_UP (nhdr->n_namesz, 4);
          if (nhdr->n_type == NT_GNU_BUILD_ID && nhdr->n_namesz == 4
              && memcmp (name, "GNU", 4) == 0)
            {
              size_t size = nhdr->n_descsz;
              if (size > MEMPROF_RAW_BUILD_ID_MAX)
                size = MEMPROF_RAW_BUILD_ID_MAX;
              segment->build_id_size = size;
              memcpy (segment->build_id, desc, size);
              return;
            }
          note = desc + ROUND_UP (nhdr->n_descsz, 4);
        }
    }
}

static int
collect_segment (struct dl_phdr_info *info, size_t size, void *cookie)
{
  struct segment_list *list = cookie;
  (void) size;
  for (int i = 0; i < info->dlpi_phnum; i++)
    {
      const ElfW (Phdr) *phdr = &info->dlpi_phdr[i];
      struct memprof_raw_segment *segment;
      if (phdr->p_type != PT_LOAD || !(phdr->p_flags & PF_X)
          || list->count == list->max)
        continue;
      segment = &list->segments[list->count++];
      memset (segment, 0, sizeof *segment);
      segment->start = info->dlpi_addr + phdr->p_vaddr;
      segment->end = segment->start + phdr->p_memsz;
      segment->offset = info->dlpi_addr;
      find_build_id (info, segment);
    }
  return 0;
}

/* See internal.h.  */
size_t
segments_collect (struct memprof_raw_segment *segments, size_t max)
{
  struct segment_list list = { segments, 0, max };
  dl_iterate_phdr (collect_segment, &list);
  return list.count;
}

/* ---- Snapshot ---- */

static void *
scratch_allocate (struct snapshot *snapshot, size_t size)
{
  size = ROUND_UP (size, 16);
  if (snapshot->scratch == NULL
      || snapshot->scratch_used + size > SNAPSHOT_SCRATCH_SIZE)
    return NULL;
  snapshot->scratch_used += size;
  return snapshot->scratch + snapshot->scratch_used - size;
}

static void
take_context (struct depot_context *context, void *cookie)
{
  struct snapshot *snapshot = cookie;
  struct raw_profile_record *record;
  struct memprof_extra_record *extra;

  if (snapshot->count == snapshot->capacity)
    {
      context->snapshot_index = 0;
      return;
    }
  extra = &snapshot->extras[snapshot->count];
  record = &snapshot->records[snapshot->count++];
  context->snapshot_index = (uint32_t) snapshot->count; /* 1-based */
  record->id = context->id;
  record->depth = context->depth;
  record->pcs = context->pcs;
  record->histogram = NULL;
  memset (extra, 0, sizeof *extra);
  if (!spin_lock_within (&context->lock, snapshot->lock_attempts))
    {
      snapshot->incomplete = true;
      record->mib.alloc_count = 0;
      return;
    }
  record->mib = context->mib;
  extra->untouched_allocations = context->extra.untouched_allocations;
  extra->touched_bytes = context->extra.touched_bytes;
  extra->access_sample_rate = access_sample_rate_of_profile ();
  if (context->mib.alloc_count != 0 && context->mib.access_histogram_size != 0)
    {
      uint64_t *copy = scratch_allocate (
          snapshot, 8 * (size_t) context->mib.access_histogram_size);
      if (copy != NULL)
        memcpy (copy, context->histogram,
                8 * (size_t) context->mib.access_histogram_size);
      else
        record->mib.access_histogram_size = 0;
      record->histogram = copy;
    }
  spin_unlock (&context->lock);
}

static void
take_live_block (uintptr_t user, uint64_t size, struct depot_context *context,
                 uint32_t alloc_timestamp, uint32_t alloc_cpu, uint32_t weight,
                 void *cookie)
{
  struct snapshot *snapshot = cookie;
  struct raw_profile_record *record;
  struct memprof_extra_record *extra;
  struct memprof_mib mib;
  struct context_extra counts;
  uint32_t entries = runtime_histogram ? histogram_entries_for (size) : 0;
  uint64_t *histogram = NULL;
  uint64_t touched_counters;
  uint64_t allocations = weight > 1 ? weight : 1; /* as mib_scale */

  if (context == NULL || context->snapshot_index == 0
      || context->snapshot_index > snapshot->count)
    return;
  record = &snapshot->records[context->snapshot_index - 1];
  extra = &snapshot->extras[context->snapshot_index - 1];
  if (record->id != context->id)
    return;
  if (entries > 0)
    {
      histogram = scratch_allocate (snapshot, 8 * (size_t) entries);
      if (histogram == NULL)
        entries = 0;
    }
  uint64_t accesses = shadow_collect (user, granules_for (size), false,
                                      &touched_counters, histogram, entries);
  snapshot->live_counters += accesses;
  mib_init_one (&mib, size, accesses, alloc_timestamp, snapshot->now, alloc_cpu,
                snapshot->cpu);
  /* Weighted as when it is freed (sampling).  */
  mib_scale (&mib, weight);
  mib.access_histogram_size = entries;
  context_extra_init_one (&counts, size, accesses, touched_counters,
                          shadow_granule_size (), weight);
  extra->untouched_allocations += counts.untouched_allocations;
  extra->touched_bytes += counts.touched_bytes;
  extra->live_allocations += allocations;
  extra->live_bytes += size * allocations;
  if (record->mib.alloc_count == 0)
    {
      record->mib = mib;
      record->histogram = histogram;
      return;
    }
  if (entries > record->mib.access_histogram_size)
    {
      /* Keep the longer histogram and add the shorter into it.  */
      mib_histogram_merge (histogram, record->histogram,
                           record->mib.access_histogram_size);
      record->histogram = histogram;
    }
  else
    mib_histogram_merge ((uint64_t *) record->histogram, histogram, entries);
  mib_merge (&record->mib, &mib);
}

/* ---- Files ---- */

bool
expand_output_name (const char *pattern, unsigned sequence, char *out,
                    size_t size)
{
  size_t used = 0;
  for (const char *p = pattern; *p != '\0'; p++)
    {
      int n;
      if (p[0] == '%' && p[1] == 'p')
        n = snprintf (out + used, size - used, "%d", (int) getpid ()), p++;
      else if (p[0] == '%' && p[1] == 'n')
        n = snprintf (out + used, size - used, "%u", sequence), p++;
      else if (p[0] == '%' && p[1] == '%')
        n = snprintf (out + used, size - used, "%%"), p++;
      else
        n = snprintf (out + used, size - used, "%c", *p);
      if (n < 0 || used + n >= size)
        return false;
      used += n;
    }
  return true;
}

int
open_temporary (const char *final, char *temp, size_t size)
{
  struct timespec now;
  clock_gettime (CLOCK_MONOTONIC, &now);
  for (unsigned attempt = 0; attempt < 16; attempt++)
    {
      int fd;
      unsigned long salt = (unsigned long) now.tv_nsec * 2654435761UL + attempt;
      if ((size_t) snprintf (temp, size, "%s.tmp.%d.%lx", final,
                             (int) getpid (), salt & 0xffffff)
          >= size)
        {
          errno = ENAMETOOLONG;
          return -1;
        }
      fd = open (temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                 0600);
      if (fd >= 0 || errno != EEXIST)
        return fd;
    }
  return -1;
}

bool
written_in_place (const char *final)
{
  struct stat status;
  return stat (final, &status) == 0 && !S_ISREG (status.st_mode)
         && !S_ISDIR (status.st_mode);
}

int
open_output (const char *final, char *temp, size_t size)
{
  if (!written_in_place (final))
    return open_temporary (final, temp, size);
  temp[0] = '\0';
  int fd = open (final, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  if (fd >= 0)
    fcntl (fd, F_SETFL, fcntl (fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

int
put_in_place (const char *temp, const char *final)
{
  if (temp[0] == '\0' || rename (temp, final) == 0)
    return 0;
  return errno;
}

void
discard_output (const char *temp)
{
  if (temp[0] != '\0')
    unlink (temp);
}

/* ---- The text summary (print_text) ---- */

static void
print_stack (const struct raw_profile_record *record)
{
  log_printf ("Stack for id %lu:", (unsigned long) record->id);
  for (uint32_t i = 0; i < record->depth; i++)
    {
      Dl_info info;
      uintptr_t pc = record->pcs[i];
      char line[1024];
      int n = snprintf (line, sizeof line, "    #%u 0x%lx", i,
                        (unsigned long) pc);
      if (dladdr ((void *) pc, &info) && info.dli_fname != NULL)
        {
          if (info.dli_sname != NULL)
            n += snprintf (line + n, sizeof line - n, " in %s+0x%lx",
                           info.dli_sname,
                           (unsigned long) (pc - (uintptr_t) info.dli_saddr));
          snprintf (line + n, sizeof line - n, " (%s+0x%lx)",
                    *info.dli_fname ? info.dli_fname : "<main program>",
                    (unsigned long) (pc - (uintptr_t) info.dli_fbase));
        }
      log_write (line, strlen (line));
      log_write ("\n", 1);
    }
}

static void
print_text (const struct snapshot *snapshot)
{
  log_printf ("Recorded MIBs (incl. live on exit):");
  for (size_t i = 0; i < snapshot->count; i++)
    {
      const struct raw_profile_record *record = &snapshot->records[i];
      const struct memprof_mib *m = &record->mib;
      if (m->alloc_count == 0)
        continue;
      log_printf ("Memory allocation stack id = %lu",
                  (unsigned long) record->id);
      log_printf ("\talloc_count %u, size (ave/min/max) %.2f / %u / %u",
                  m->alloc_count, (double) m->total_size / m->alloc_count,
                  m->min_size, m->max_size);
      log_printf ("\taccess_count (ave/min/max): %.2f / %lu / %lu",
                  (double) m->total_access_count / m->alloc_count,
                  (unsigned long) m->min_access_count,
                  (unsigned long) m->max_access_count);
      log_printf ("\tlifetime (ave/min/max): %.2f / %u / %u",
                  (double) m->total_lifetime / m->alloc_count, m->min_lifetime,
                  m->max_lifetime);
      log_printf (
          "\tnum migrated: %u, num lifetime overlaps: %u, num same alloc "
          "cpu: %u, num same dealloc_cpu: %u",
          m->num_migrated_cpu, m->num_lifetime_overlaps, m->num_same_alloc_cpu,
          m->num_same_dealloc_cpu);
      if (m->access_histogram_size > 0)
        {
          char line[1024];
          int n = snprintf (line, sizeof line, "AccessCountHistogram[%u]:",
                            m->access_histogram_size);
          for (uint32_t j = 0;
               j < m->access_histogram_size && j < 32 && n < 900; j++)
            n += snprintf (line + n, sizeof line - n, " %lu",
                           (unsigned long) record->histogram[j]);
          log_printf ("%s", line);
        }
      print_stack (record);
    }
}

/* ---- The dump ---- */

/* Where the side file of the profile FINAL goes.  */
#define SIDE_FILE_PATH_BYTES (PATH_BYTES + sizeof MEMPROF_EXTRA_SUFFIX)

/* Write, as EXTRA_FINAL, the side file of the profile just written (SIZE
   bytes hashing to HASH): a temporary file renamed into place.  Returns
   0, or -1 after one line on the log.  */
static int
write_side_file (const struct snapshot *snapshot, const char *extra_final,
                 uint64_t size, uint64_t hash, enum memprof_extra_reason reason)
{
  char extra_temp[SIDE_FILE_PATH_BYTES + 64];
  struct memprof_extra_header header = {
    .profile_size = size,
    .profile_hash = hash,
    .granule_size = shadow_granule_size (),
    .reason = reason,
    .timestamp_ms = snapshot->now,
  };
  struct raw_writer writer;
  int fd, error;

  fd = open_output (extra_final, extra_temp, sizeof extra_temp);
  if (fd < 0)
    error = errno;
  else
    {
      raw_writer_init (&writer, fd, write_buffer, sizeof write_buffer);
      error = raw_extra_write_with_peak (
          &writer, header, snapshot->records, snapshot->extras, snapshot->count,
          snapshot->globals, snapshot->global_count,
          runtime_options.peak ? &snapshot->peak : NULL,
          snapshot->peak_contexts, snapshot->samples);
      if (error == 0 && close (fd) != 0)
        error = errno;
      else if (error != 0)
        close (fd);
      if (error == 0)
        error = put_in_place (extra_temp, extra_final);
      if (error != 0)
        discard_output (extra_temp);
    }
  if (error != 0)
    {
      /* A side file of an earlier dump must not stay next to this
         profile.  */
      if (!written_in_place (extra_final))
        unlink (extra_final);
      log_printf ("cannot write the side file '%s': %s; the profile is "
                  "written without it",
                  extra_final, strerror (error));
      return -1;
    }
  return 0;
}

static int
write_snapshot (const struct snapshot *snapshot,
                const struct segment_list *segments, unsigned sequence,
                enum memprof_extra_reason reason)
{
  char final[PATH_BYTES], temp[PATH_BYTES + 64];
  char extra_final[SIDE_FILE_PATH_BYTES];
  struct raw_writer writer;
  bool side_file = false;
  int fd, error;

  if (!expand_output_name (runtime_options.profile_file, sequence, final,
                           sizeof final))
    {
      log_printf ("profile_file '%s' expands to a name that is too long; "
                  "no profile written",
                  runtime_options.profile_file);
      return -1;
    }
  fd = open_output (final, temp, sizeof temp);
  if (fd < 0)
    {
      log_printf (
          "cannot create the profile next to '%s': %s; no profile written",
          final, strerror (errno));
      return -1;
    }
  raw_writer_init (&writer, fd, write_buffer, sizeof write_buffer);
  error = raw_profile_write (&writer, segments->segments, segments->count,
                             snapshot->records, snapshot->count);
  if (error == 0 && close (fd) != 0)
    error = errno;
  else if (error != 0)
    close (fd);
  /* The side file goes into place first: whoever sees the profile sees
     its side file too.  */
  memprof_extra_path (final, extra_final, sizeof extra_final);
  /* A profile written in place (/dev/null, a FIFO) has a side file only
     where one is waiting in place too: none is made beside a device.  */
  if (error == 0 && runtime_options.write_extra
      && (temp[0] != '\0' || written_in_place (extra_final)))
    side_file = write_side_file (snapshot, extra_final, writer.written,
                                 writer.hash, reason)
                == 0;
  if (error == 0)
    error = put_in_place (temp, final);
  if (error != 0)
    {
      discard_output (temp);
      if (side_file && !written_in_place (extra_final))
        unlink (extra_final);
      log_printf ("cannot write the profile '%s': %s; no profile written",
                  final, strerror (error));
      return -1;
    }
  if (runtime_options.verbosity >= 1)
    {
      log_printf ("profile written to %s (%lu bytes)%s", final,
                  (unsigned long) writer.written,
                  side_file ? ", with its side file" : "");
      stack_report ();
    }
  context_cache_report ();
  return 0;
}

/* Take the dump lock from a signal handler: wait a while for a dump
   another thread is writing, never for ever (the interrupted thread may
   be the one writing it).  */
static bool
lock_dump_in_signal (void)
{
  const struct timespec pause = { 0, SIGNAL_DUMP_LOCK_PAUSE_NS };
  for (int tries = 0; tries < SIGNAL_DUMP_LOCK_TRIES; tries++)
    {
      if (pthread_mutex_trylock (&dump_lock) == 0)
        return true;
      nanosleep (&pause, NULL);
    }
  return false;
}

/* Take and write a profile for REASON; IN_SIGNAL from a signal handler:
   then no lock is waited for without bound, and no text summary (it
   needs the dynamic loader's lock and stdio's number formatting).  */
static int
dump (enum memprof_extra_reason reason, bool in_signal)
{
  struct snapshot snapshot;
  struct segment_list segments;
  size_t records_bytes, extras_bytes, segments_bytes, globals_bytes = 0;
  int result = 0;

  if (runtime_state != RUNTIME_RUNNING)
    return -1;
  if (runtime_loader_lost)
    {
      log_printf ("no profile in this child: it was forked while another "
                  "thread walked the loaded objects (dl_iterate_phdr), "
                  "whose lock the child can never take");
      return -1;
    }
  in_runtime++;
  if (!in_signal)
    pthread_mutex_lock (&dump_lock);
  else if (!lock_dump_in_signal ())
    {
      log_printf ("another profile was being written when the signal came "
                  "and did not finish; no profile written for the signal");
      in_runtime--;
      return -1;
    }

  memset (&snapshot, 0, sizeof snapshot);
  snapshot.lock_attempts = in_signal ? SIGNAL_SPIN_ATTEMPTS : 0;
  /* Contexts created while the snapshot is taken are left for the next. */
  snapshot.capacity = depot_context_count () + 1;
  records_bytes = snapshot.capacity * sizeof *snapshot.records;
  extras_bytes = snapshot.capacity * sizeof *snapshot.extras;
  segments_bytes = SEGMENTS_MAX * sizeof *segments.segments;
  snapshot.records = runtime_map (records_bytes);
  snapshot.extras = runtime_map (extras_bytes);
  snapshot.scratch
      = runtime_histogram ? runtime_map (SNAPSHOT_SCRATCH_SIZE) : NULL;
  segments.segments = runtime_map (segments_bytes);
  segments.count = 0;
  segments.max = SEGMENTS_MAX;
  if (runtime_options.write_extra)
    {
      /* Reserved for every granule of the program's data, committed only
         for those that were accessed.  */
      snapshot.global_capacity = globals_capacity ();
      globals_bytes = snapshot.global_capacity * sizeof *snapshot.globals;
      if (globals_bytes > 0)
        snapshot.globals = runtime_map (globals_bytes);
      if (snapshot.globals == NULL)
        snapshot.global_capacity = 0;
      snapshot.peak_capacity = peak_context_capacity ();
      if (snapshot.peak_capacity > 0)
        snapshot.peak_contexts = runtime_map (snapshot.peak_capacity
                                              * sizeof *snapshot.peak_contexts);
      if (snapshot.peak_contexts == NULL)
        snapshot.peak_capacity = 0;
    }
  if (snapshot.records == NULL || snapshot.extras == NULL
      || segments.segments == NULL)
    {
      log_printf ("cannot map memory for the profile: %s; no profile written",
                  strerror (errno));
      result = -1;
    }
  else
    {
      snapshot.now = runtime_now_ms ();
      snapshot.cpu = runtime_current_cpu ();
      depot_for_each (take_context, &snapshot);
      if (!allocator_for_each_live (take_live_block, &snapshot,
                                    snapshot.lock_attempts))
        snapshot.incomplete = true;
      snapshot.global_count
          = globals_collect (snapshot.globals, snapshot.global_capacity);
      /* The peak's locks may be held by the interrupted thread.  */
      if (runtime_options.write_extra && !in_signal)
        peak_collect (&snapshot.peak, snapshot.peak_contexts,
                      snapshot.peak_capacity, &snapshot.samples);
      segments.count = segments_collect (segments.segments, SEGMENTS_MAX);
      modules_add_unloaded (segments.segments, &segments.count, SEGMENTS_MAX);
      profile_heap_accesses = 0;
      for (size_t i = 0; i < snapshot.count; i++)
        profile_heap_accesses += snapshot.records[i].mib.total_access_count;
      profile_live_heap_counters = snapshot.live_counters;
      if (snapshot.incomplete)
        {
          log_printf ("the interrupted thread holds a lock of the runtime; "
                      "no profile written for the signal");
          result = -1;
        }
      else if (reason != MEMPROF_EXTRA_AT_EXIT
               || (runtime_options.write_profile
                   && runtime_options.dump_at_exit))
        {
          result
              = write_snapshot (&snapshot, &segments, dump_sequence++, reason);
          if (result == 0 && !in_signal)
            link_check (segments.segments, segments.count);
        }
      if (runtime_options.print_text && !in_signal
          && (reason != MEMPROF_EXTRA_AT_EXIT || runtime_options.dump_at_exit))
        print_text (&snapshot);
    }

  if (snapshot.records != NULL)
    runtime_unmap (snapshot.records, records_bytes);
  if (snapshot.extras != NULL)
    runtime_unmap (snapshot.extras, extras_bytes);
  if (snapshot.scratch != NULL)
    runtime_unmap (snapshot.scratch, SNAPSHOT_SCRATCH_SIZE);
  if (snapshot.globals != NULL)
    runtime_unmap (snapshot.globals, globals_bytes);
  if (snapshot.peak_contexts != NULL)
    runtime_unmap (snapshot.peak_contexts,
                   snapshot.peak_capacity * sizeof *snapshot.peak_contexts);
  if (segments.segments != NULL)
    runtime_unmap (segments.segments, segments_bytes);
  pthread_mutex_unlock (&dump_lock);
  in_runtime--;
  return result;
}

/* A dump is one of the runtime's sections (internal.h): it holds the
   dump's lock and a context's at a time, which the thread's signal
   handlers' allocations must not wait for.  A dump made by a handler
   that interrupted a section is inside that one.  */
int
profile_dump (enum memprof_extra_reason reason)
{
  bool entered = entry_begin ();
  int result = dump (reason, false);
  if (entered)
    entry_end ();
  return result;
}

int
profile_dump_in_signal (void)
{
  bool entered = entry_begin ();
  int result = dump (MEMPROF_EXTRA_ON_SIGNAL, true);
  if (entered)
    entry_end ();
  return result;
}
