/* The heap's peak in the analysis's model (profile.h, struct
   profile_peak): how the peaks of several runs combine.  A peak is a
   moment of one run; adding two runs' breakdowns would describe a moment
   that never happened.  So a merged profile keeps the highest peak of its
   runs, whole (the per-context bytes live at it and that run's timeline),
   and counts the runs.  The choice is the same whatever the order of the
   merges: higher bytes win, then the earlier time, then fewer blocks.  */

#include <stdlib.h>

#include "profile.h"

static bool
peak_is_higher (const struct profile_peak *a, const struct profile_peak *b)
{
  if (a->bytes != b->bytes)
    return a->bytes > b->bytes;
  if (a->time_us != b->time_us)
    return a->time_us < b->time_us;
  return a->blocks < b->blocks;
}

void
profile_peak_fold (struct profile *profile, struct profile_peak *incoming,
                   const uint32_t *contexts, const uint64_t *bytes,
                   const uint64_t *blocks, size_t count)
{
  uint64_t runs = profile->peak.runs + incoming->runs;
  bool replace
      = profile->peak.runs == 0 || peak_is_higher (incoming, &profile->peak);
  if (!replace)
    {
      free (incoming->samples);
      profile->peak.runs = runs;
      return;
    }
  for (size_t i = 0; i < profile->context_count; i++)
    profile->contexts[i].peak_bytes = profile->contexts[i].peak_blocks = 0;
  for (size_t i = 0; i < count; i++)
    {
      profile->contexts[contexts[i]].peak_bytes += bytes[i];
      profile->contexts[contexts[i]].peak_blocks += blocks[i];
    }
  free (profile->peak.samples);
  profile->peak = *incoming;
  profile->peak.runs = runs;
}
