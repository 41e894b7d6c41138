/* memprof show --metric=peak: see show_peak.h and docs/analysis.md
   ("The heap's peak").  */

#include "show_peak.h"

#include <inttypes.h>

#include "util.h"

void
show_peak_text (FILE *out, const struct profile *profile)
{
  const struct profile_peak *peak = &profile->peak;
  char bytes[32], error[32];
  if (peak->runs == 0)
    {
      fprintf (out, "No peak: the profile's side files do not track it "
                    "(runtime before version 3 side files, peak=0, or "
                    "write_extra=0).\n");
      return;
    }
  fprintf (out, "Peak: %s live in %" PRIu64 " blocks at %.1f ms of %.1f ms",
           format_bytes ((double) peak->bytes, bytes, sizeof bytes),
           peak->blocks, (double) peak->time_us / 1000.0,
           (double) peak->duration_us / 1000.0);
  if (peak->runs > 1)
    fprintf (out, " (the highest of %" PRIu64 " runs)", peak->runs);
  uint64_t missing = peak->bytes > peak->snapshot_bytes
                         ? peak->bytes - peak->snapshot_bytes
                         : 0;
  if (missing == 0 && !peak->sampled)
    fprintf (out, "; the breakdown is exact.\n");
  else
    fprintf (out,
             "; the breakdown was copied at %s live (%s short of the "
             "peak)%s.\n",
             format_bytes ((double) peak->snapshot_bytes, bytes, sizeof bytes),
             format_bytes ((double) missing, error, sizeof error),
             peak->sampled ? ", estimated from sampled allocations" : "");
}

void
show_peak_json (FILE *out, const struct profile *profile)
{
  const struct profile_peak *peak = &profile->peak;
  if (peak->runs == 0)
    {
      fprintf (out, "  \"peak\": null");
      return;
    }
  fprintf (out,
           "  \"peak\": {\"bytes\": %" PRIu64 ", \"blocks\": %" PRIu64
           ", \"time_us\": %" PRIu64 ", \"duration_us\": %" PRIu64
           ", \"snapshot_bytes\": %" PRIu64 ", \"snapshot_time_us\": %" PRIu64
           ", \"error_bytes\": %" PRIu64 ", \"sampled\": %s, \"runs\": %" PRIu64
           ",\n    \"timeline\": [",
           peak->bytes, peak->blocks, peak->time_us, peak->duration_us,
           peak->snapshot_bytes, peak->snapshot_time_us,
           peak->bytes > peak->snapshot_bytes
               ? peak->bytes - peak->snapshot_bytes
               : 0,
           peak->sampled ? "true" : "false", peak->runs);
  for (size_t i = 0; i < peak->sample_count; i++)
    {
      const struct profile_peak_sample *sample = &peak->samples[i];
      fprintf (out,
               "%s\n      {\"time_us\": %" PRIu64 ", \"live_bytes\": %" PRIu64
               ", \"live_blocks\": %" PRIu64 ", \"top\": [",
               i ? "," : "", sample->time_us, sample->live_bytes,
               sample->live_blocks);
      int shown = 0;
      for (int k = 0; k < PROFILE_PEAK_TOP; k++)
        if (sample->top_context[k] != PROFILE_PEAK_NO_CONTEXT)
          fprintf (out, "%s{\"context\": %u, \"bytes\": %" PRIu64 "}",
                   shown++ ? ", " : "", sample->top_context[k],
                   sample->top_bytes[k]);
      fprintf (out, "]}");
    }
  fprintf (out, "\n    ]}");
}
