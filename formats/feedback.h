/* A profile as profile feedback needs it: allocation contexts as LLVM
   frames (function GUID, line offset, column, inline flag), each with its
   MemInfoBlock, and the program's global variables with their accesses.
   Read from a .mprof file (memprof merge --binary) or from the YAML that
   `llvm-profdata show --memory' (and `memprof show --format=yaml')
   print.  In YAML written by hand, a frame's Function (GUID) may be left
   out when its SymbolName is given, and so may a record's FunctionGUID.  The GCC plugin's memprof-use links this code; so do the fuzz
   targets.  */

#ifndef MEMPROF_ANALYSIS_FEEDBACK_H
#define MEMPROF_ANALYSIS_FEEDBACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mib.h"

#ifdef __cplusplus
extern "C" {
#endif

struct feedback_frame
{
  uint64_t guid;
  uint32_t line_offset;
  uint32_t column;
  uint32_t inlined; /* into the next frame */
  uint32_t name;    /* offset in strings: the function's name, or 0 */
};

struct feedback_context
{
  uint32_t first_frame; /* in frames; leaf first */
  uint32_t frame_count;
  struct memprof_mib mib;
};

/* A global or static variable of the program (a .mprof file's GLOBALS,
   symbolized; YAML has none).  */
struct feedback_global
{
  uint32_t name; /* offset in strings: the symbol's name */
  uint64_t size;
  uint64_t accesses; /* attributed as globals.h says: 0 is never accessed */
  uint32_t file;     /* offset in strings: a static variable's source file
                        (its unit's STT_FILE), or 0 for a public symbol */
};

struct feedback
{
  struct feedback_frame *frames;
  size_t frame_count, frame_capacity;
  struct feedback_context *contexts;
  size_t context_count, context_capacity;
  struct feedback_global *globals;
  size_t global_count, global_capacity;
  char *strings; /* NUL-terminated names, back to back; offset 0 is "" */
  size_t strings_size, strings_capacity;
  bool has_columns; /* some frame has a column: match columns */
};

void feedback_init (struct feedback *feedback);
void feedback_free (struct feedback *feedback);

/* Read PATH, a .mprof file or llvm-profdata's YAML.  Returns 0, or -1
   with a message in ERROR naming the file, where (byte or line) and what
   was expected.  */
int feedback_load (struct feedback *feedback, const char *path, char *error,
                   size_t error_size);

/* The same for SIZE bytes at DATA named NAME.  */
int feedback_load_buffer (struct feedback *feedback, const uint8_t *data,
                          size_t size, const char *name, char *error,
                          size_t error_size);

static inline const char *
feedback_string (const struct feedback *feedback, uint32_t offset)
{
  return feedback->strings + offset;
}

/* LLVM 19's classification of a context (MemoryProfileInfo.cpp), with
   its thresholds as parameters.  */
enum feedback_class
{
  FEEDBACK_NOT_COLD,
  FEEDBACK_COLD,
  FEEDBACK_HOT
};

struct feedback_thresholds
{
  double cold_density;     /* accesses per byte per second: below is cold
                              (0.05) */
  double cold_lifetime_ms; /* mean lifetime at least this for cold
                              (200,000) */
  double hot_density;      /* above is hot (1000) */
};

extern const struct feedback_thresholds feedback_llvm_thresholds;

/* The lifetime access density LLVM compares (accesses per byte per s)
   and the mean lifetime (ms) of CONTEXT.  */
double feedback_density (const struct feedback_context *context);
double feedback_lifetime_ms (const struct feedback_context *context);
enum feedback_class feedback_classify (const struct feedback_context *context,
                                       const struct feedback_thresholds *t);
const char *feedback_class_name (enum feedback_class class_);

/* Thresholds that fit the run (docs/feedback.md, "Thresholds that fit the
   run").  The instrumented run is slower than the real one, and a test
   run shorter than production: LLVM's absolute thresholds (200 s) never
   fire in a run of seconds.  These are relative to the profile itself,
   so that a uniform slowdown, or a run ten times longer doing the same
   work, gives the same classes: a lifetime as a share of the run's
   length, a density as a multiple of the run's median density (the
   density of the median allocated byte).  */
struct feedback_run_thresholds
{
  double cold_lifetime_share; /* of the run's length: at least this for
                                 cold (0.10) */
  double cold_density_ratio;  /* of the median density: below is cold
                                 (0.25) */
  double hot_density_ratio;   /* of the median density: above is hot (4) */
};

extern const struct feedback_run_thresholds feedback_default_run_thresholds;

/* What the thresholds are relative to, measured on the profile.  */
struct feedback_run
{
  double length_ms;      /* the last free (or exit) after the first
                            allocation, or the longest lifetime if more */
  double median_density; /* accesses per byte per s of the median byte
                            (contexts weighted by their TotalSize) */
};

void feedback_measure_run (const struct feedback *feedback,
                           struct feedback_run *run);

/* LLVM's absolute thresholds equivalent to RELATIVE for RUN.  */
void feedback_fit_thresholds (const struct feedback_run *run,
                              const struct feedback_run_thresholds *relative,
                              struct feedback_thresholds *out);

#ifdef __cplusplus
}
#endif

#endif /* MEMPROF_ANALYSIS_FEEDBACK_H */
