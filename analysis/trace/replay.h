/* The replay proper (replay.c) and its charts (replay_chart.c), for
   cmd_replay.c.  */

#ifndef MEMPROF_ANALYSIS_REPLAY_H
#define MEMPROF_ANALYSIS_REPLAY_H

#include <stdbool.h>
#include <stdint.h>

#include "workload.h"

struct replay_options
{
  const char *workload;
  const char *allocator; /* as given: glibc, jemalloc, tcmalloc, a path */
  const char *library;   /* preloaded, NULL for glibc */
  const char *csv, *svg;
  int interval_ms;
  bool no_write; /* --no-write: leave the blocks as the allocator gives
                    them */
};

/* In the child: replay WORKLOAD (checked), print the report, write the
   CSV and SVG.  Returns the exit status.  */
int replay_run (const struct replay_options *options,
                const struct workload *workload);

struct replay_sample
{
  double ms;     /* since the replay started */
  uint64_t rss;  /* anonymous resident bytes */
  uint64_t live; /* live requested bytes, summed over the threads */
};

struct replay_curve_point
{
  uint64_t sequence, live;
};

/* Write the CSV (docs/trace.md) to PATH; -1 with a message.  */
int replay_write_csv (const char *path, const struct replay_sample *samples,
                      size_t sample_count,
                      const struct replay_curve_point *curve,
                      size_t curve_count, char *error, size_t error_size);
/* Write the chart to PATH: RSS and live requested bytes against time,
   the ideal RSS as a line; TITLE names the workload and allocator.  */
int replay_write_svg (const char *path, const char *title,
                      const struct replay_sample *samples, size_t sample_count,
                      uint64_t ideal_rss, char *error, size_t error_size);

#endif /* MEMPROF_ANALYSIS_REPLAY_H */
