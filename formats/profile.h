/* The analysis's model of a profile: every allocation context of one or
   many runs, merged.  A context is a call stack of locations (return
   addresses, module-relative so that runs with different load addresses
   merge); a location, once symbolized, expands to one or more frames
   (its inline chain).  Raw profiles, their side files and .mprof files
   all load into it; `memprof merge' writes it out as .mprof.

   Merging is commutative and associative: contexts are keyed by their
   locations, and MemInfoBlocks combine with profile_mib_combine, which,
   unlike the runtime's per-allocation merge, does not depend on which
   profile comes first.

   The program's global variables come as granules (accesses per 64 bytes
   of a module's data, from version 2 side files), summed by address, and
   once symbolized, as the module's data symbols; the accesses of each
   global are derived from both (globals.h).  */

#ifndef MEMPROF_ANALYSIS_PROFILE_H
#define MEMPROF_ANALYSIS_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mib.h"
#include "rawformat.h"
#include "util.h"

/* A location's module when no segment of the profile holds its address:
   the address is then absolute.  */
#define PROFILE_NO_MODULE UINT32_MAX

struct profile_module
{
  uint8_t build_id[MEMPROF_RAW_BUILD_ID_MAX];
  uint32_t build_id_size;
  uint32_t path; /* string: the binary it was symbolized from, or 0 */
};

/* A frame inlined into the next frame of its location.  */
#define PROFILE_FRAME_INLINED 1u
/* A frame named from the symbol table: no debug information covers it
   (llvm-profdata drops such frames).  */
#define PROFILE_FRAME_NO_DEBUG_INFO 2u
#define PROFILE_FRAME_ALL_FLAGS 3u

/* One symbolic frame: a function at a source position.  */
struct profile_frame
{
  uint32_t function;  /* string: linkage name (mangled for C++) */
  uint32_t file;      /* string: source file as DWARF names it */
  uint32_t line;      /* 0: unknown */
  uint32_t column;    /* 0: unknown */
  uint32_t decl_line; /* the function's first line: LLVM's line offsets
                         count from it */
  uint32_t flags;     /* PROFILE_FRAME_INLINED, PROFILE_FRAME_NO_DEBUG_INFO */
  uint64_t guid;      /* LLVM's function GUID: MD5 of the linkage name */
};

struct profile_location
{
  uint32_t module;      /* index in modules, or PROFILE_NO_MODULE */
  uint32_t frame_count; /* 0: not symbolized */
  uint64_t address;     /* module-relative (the ELF virtual address of a byte
                           of the call instruction) */
  uint32_t first_frame; /* index in frames of its innermost frame */
};

/* What the runtime's side file adds to a context (docs/profile-format.md);
   every field 0 when the profile had none.  */
struct profile_extra
{
  uint64_t untouched_allocations; /* allocations never accessed */
  uint64_t touched_bytes;         /* bytes in granules that were accessed,
                                     at most each allocation's size */
  uint64_t live_allocations;      /* still live when a profile was written
                                     at exit: leaked */
  uint64_t live_bytes;
  uint64_t access_sample_rate; /* the largest of the inputs': > 1 when
                                  accesses were counted one in N */
};

struct profile_context
{
  uint32_t first_location; /* index in context_locations */
  uint32_t location_count; /* leaf first */
  struct memprof_mib mib;
  uint64_t *histogram; /* mib.access_histogram_size values, or NULL */
  struct profile_extra extra;
  uint32_t has_extra; /* every profile folded in had a side file */
  uint32_t origin;    /* CONTEXT_* flags of origin.h, set once symbolized */
  uint64_t peak_bytes, peak_blocks; /* live at the peak (profile_peak) */
};

/* Accesses to one 64-byte granule of a module's data (the side file's
   global records, version 2), summed over the profiles folded in.  */
struct profile_granule
{
  uint32_t module;
  uint64_t address; /* module-relative, a multiple of 64 */
  uint64_t accesses;
};

/* A local symbol (a static variable): FILE names its source file.  */
#define PROFILE_GLOBAL_LOCAL 1u
#define PROFILE_GLOBAL_ALL_FLAGS 1u

/* A global or static variable of a module: a data symbol (STT_OBJECT) of
   its ELF symbol table, which the granules are attributed to.  */
struct profile_global
{
  uint32_t module;
  uint32_t name;    /* string: the symbol's name */
  uint32_t file;    /* string: a local symbol's source file (STT_FILE), or 0 */
  uint32_t flags;   /* PROFILE_GLOBAL_LOCAL */
  uint64_t address; /* module-relative: st_value */
  uint64_t size;    /* st_size, not 0 */
};

/* The heap timeline (side file version 3): live bytes at one moment and
   the contexts that held the most of them.  */
#define PROFILE_PEAK_TOP 8
#define PROFILE_PEAK_NO_CONTEXT UINT32_MAX
struct profile_peak_sample
{
  uint64_t time_us;
  uint64_t live_bytes, live_blocks;
  uint32_t top_context[PROFILE_PEAK_TOP]; /* or PROFILE_PEAK_NO_CONTEXT */
  uint64_t top_bytes[PROFILE_PEAK_TOP];
};

/* The heap's high-water mark of one run (peak.c): peaks are per run, so
   a merged profile keeps the run whose peak is highest, with its
   contexts' peak_bytes and its timeline; the others only count in
   RUNS.  */
struct profile_peak
{
  uint64_t runs;           /* inputs that tracked the peak */
  uint64_t bytes, blocks;  /* the peak; 0: no run tracked it */
  uint64_t time_us;        /* since the run's start */
  uint64_t snapshot_bytes; /* live when the breakdown was copied */
  uint64_t snapshot_time_us;
  uint64_t duration_us; /* when the profile was written */
  uint32_t sampled;     /* 1: estimates (sample_interval) */
  struct profile_peak_sample *samples;
  size_t sample_count;
};

struct profile
{
  /* Strings, interned; index 0 is "".  */
  char **strings;
  size_t string_count, string_capacity;
  struct index_table string_index;

  struct profile_module *modules;
  size_t module_count, module_capacity;

  struct profile_location *locations;
  size_t location_count, location_capacity;
  struct index_table location_index;

  struct profile_frame *frames;
  size_t frame_count, frame_capacity;

  uint32_t *context_locations;
  size_t context_location_count, context_location_capacity;

  struct profile_context *contexts;
  size_t context_count, context_capacity;
  struct index_table context_index;

  /* The programs' global variables (globals.h).  */
  struct profile_granule *granules;
  size_t granule_count, granule_capacity;
  struct index_table granule_index;
  struct profile_global *globals;
  size_t global_count, global_capacity;
  struct index_table global_index;

  /* What went in.  */
  uint64_t inputs;            /* raw profiles and .mprof files merged */
  uint64_t inputs_with_extra; /* of which raw profiles with a side file */
  uint64_t global_inputs;     /* raw profiles whose side file counted the
                                 accesses to globals (version 2) */
  uint32_t histogram_granule; /* bytes per histogram value: 8, or 0 */
  uint32_t main_module;       /* the program's module (the first segment of the
                           first raw profile), or PROFILE_NO_MODULE */
  struct profile_peak peak;
};

void profile_init (struct profile *profile);
void profile_free (struct profile *profile);

/* Load PATH into PROFILE, whatever it is: a raw profile (several laid end
   to end are fine; its side file PATH.extra is read when present and
   matching), or a .mprof file.  Returns 0, or -1 with a message naming
   PATH, the byte offset and what was expected in ERROR.  */
int profile_load (struct profile *profile, const char *path, char *error,
                  size_t error_size);

/* The same for a file already in memory: SIZE bytes at DATA named NAME,
   and, for a raw profile, its side file (SIDE_DATA may be NULL).  */
int profile_load_buffer (struct profile *profile, const uint8_t *data,
                         size_t size, const char *name,
                         const uint8_t *side_data, size_t side_size,
                         const char *side_name, char *error, size_t error_size);

/* The string with INDEX.  */
static inline const char *
profile_string (const struct profile *profile, uint32_t index)
{
  return profile->strings[index];
}
uint32_t profile_intern (struct profile *profile, const char *text);

/* The key of the tables of (module, address) pairs: locations, and the
   globals' granules (globals.c), and its hash.  */
struct profile_address_key
{
  uint32_t module;
  uint64_t address;
};
uint64_t profile_address_hash (uint32_t module, uint64_t address);

/* Add or find things; each returns an index.  */
uint32_t profile_add_module (struct profile *profile, const uint8_t *build_id,
                             uint32_t build_id_size);
/* MODULE is the program of a profile being folded in: it becomes the
   main module (of two programs, the one with the smaller build id).  */
void profile_note_main_module (struct profile *profile, uint32_t module);
uint32_t profile_add_location (struct profile *profile, uint32_t module,
                               uint64_t address);
/* Give LOCATION its frames (innermost first), replacing any it had.  */
void profile_set_frames (struct profile *profile, uint32_t location,
                         const struct profile_frame *frames, uint32_t count);
/* Fold one context (LOCATIONS, leaf first) into PROFILE.  HISTOGRAM holds
   MIB->access_histogram_size values or is NULL; EXTRA may be NULL.
   Returns the context's index.  */
uint32_t profile_add_context (struct profile *profile,
                              const uint32_t *locations,
                              uint32_t location_count,
                              const struct memprof_mib *mib,
                              const uint64_t *histogram,
                              const struct profile_extra *extra);

/* Fold one run's peak (INCOMING, whose samples PROFILE takes over) into
   PROFILE: it replaces PROFILE's when higher (ties: the earlier peak),
   with COUNT contexts (indexes CONTEXTS) live at it with BYTES and
   BLOCKS.  */
void profile_peak_fold (struct profile *profile, struct profile_peak *incoming,
                        const uint32_t *contexts, const uint64_t *bytes,
                        const uint64_t *blocks, size_t count);

/* Keep the contexts whose KEEP[index] is true, in their order, and drop
   the others (their locations stay, unused).  */
void profile_keep_contexts (struct profile *profile, const bool *keep);

/* The locations of CONTEXT, leaf first.  */
static inline const uint32_t *
profile_context_locations (const struct profile *profile,
                           const struct profile_context *context)
{
  return profile->context_locations + context->first_location;
}

/* Combine B into A, for MIBs of the same context from different profiles:
   Totals and counters add, Mins and Maxes take the extreme, and the
   fields that describe one allocation (timestamps, CPU ids) come from the
   MIB whose deallocation is later (ties broken by the allocation time,
   then the CPUs), so that the result depends on neither the order nor the
   grouping of merges.  */
void profile_mib_combine (struct memprof_mib *a, const struct memprof_mib *b);

/* Is FILE one of the LLVM runtime's own source files (whose frames
   llvm-profdata drops)?  */
bool profile_is_llvm_runtime_file (const char *file);

/* Is LOCATION one llvm-profdata keeps: in the program (the main module),
   symbolized from debug information, not in LLVM's runtime?  */
bool profile_location_is_llvm_frame (const struct profile *profile,
                                     uint32_t location);

/* The length of NAME without a trailing ".llvm.N" or ".part.N" (LLVM's
   canonical function name: what its GUID and SymbolName are made of).  */
size_t profile_canonical_length (const char *name);

/* LLVM's function GUID for a linkage name: the first 8 bytes of the MD5 of
   its canonical name as a little-endian integer.  */
uint64_t profile_guid (const char *linkage_name);

#endif /* MEMPROF_ANALYSIS_PROFILE_H */
