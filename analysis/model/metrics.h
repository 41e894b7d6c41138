/* What the subcommands rank and flag contexts by: the metrics derived
   from a context's MemInfoBlock and side-file data, the sort keys, and the
   findings (waste a person should look at).  docs/analysis.md defines
   each, with its threshold.  */

#ifndef MEMPROF_ANALYSIS_METRICS_H
#define MEMPROF_ANALYSIS_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile.h"

struct metrics
{
  double bytes;       /* TotalSize: requested bytes */
  double allocs;      /* AllocCount */
  double accesses;    /* TotalAccessCount */
  double density;     /* accesses per byte: TotalAccessCount / TotalSize */
  double lifetime_ms; /* mean lifetime: TotalLifetime / AllocCount */
  double mean_size;   /* TotalSize / AllocCount */
  /* Lifetime access density as LLVM's hot/cold rule reads it: accesses
     per byte per second (TotalLifetimeAccessDensity / AllocCount / 100).  */
  double lifetime_density;
  double peak_bytes; /* live at the heap's peak (profile_peak) */
  double peak_blocks;
  double waste;     /* bytes never touched, as far as the data tells */
  bool waste_known; /* untouched bytes can be told (metrics_untouched_known)
                       and the profile has the data: else WASTE is 0 */
};

enum sort_key
{
  SORT_BYTES,
  SORT_ALLOCS,
  SORT_ACCESSES,
  SORT_DENSITY,
  SORT_LIFETIME,
  SORT_WASTE,
  SORT_PEAK /* bytes live at the heap's peak */
};

/* The sort key named NAME ("bytes", "allocs", ...); -1 when unknown.  */
int sort_key_parse (const char *name);
const char *sort_key_name (enum sort_key key);
/* The names, "bytes|allocs|...".  */
extern const char sort_key_names[];

/* HAS_ACCESSES: metrics_profile_has_accesses of the context's profile.  */
void metrics_of (const struct profile_context *context, bool has_accesses,
                 struct metrics *metrics);

/* The indices of PROFILE's contexts ranked by KEY, largest first (ties
   by bytes, then by index); the caller frees it.  */
uint32_t *metrics_rank (const struct profile *profile, enum sort_key key);

/* Can CONTEXT's untouched allocations and bytes be told: HAS_ACCESSES
   (its profile counted accesses), every access counted (no
   access_sample_rate), and its allocation called from the user's code
   (origin.h: code the plugin did not instrument may access it)?  When
   not, its waste is unknown and it has no never-touched or
   over-reserved finding.  */
bool metrics_untouched_known (const struct profile_context *context,
                              bool has_accesses);

/* Does PROFILE hold access counts at all (was its program instrumented)?
   Without them no context can be called untouched.  */
bool metrics_profile_has_accesses (const struct profile *profile);

enum finding_kind
{
  FINDING_NEVER_TOUCHED, /* allocations no access reached */
  FINDING_OVER_RESERVED, /* most of the bytes never touched */
  FINDING_SHORT_LIVED,   /* many small allocations freed at once */
  FINDING_LEAKED,        /* live at exit */
  FINDING_AT_PEAK,       /* a large share of the heap's peak */
  FINDING_COUNT
};

struct finding
{
  enum finding_kind kind;
  double bytes;   /* what it costs, for ranking findings */
  char text[256]; /* one sentence for people */
};

/* The thresholds: a finding is reported only above them.  */
struct finding_thresholds
{
  double over_reserved_fraction;  /* untouched share of the bytes: 0.5 */
  double over_reserved_min_bytes; /* untouched bytes: 4096 */
  double short_lived_min_allocs;  /* allocations: 1000 */
  double short_lived_max_size;    /* mean size: 256 */
  double short_lived_max_ms;      /* mean lifetime: 1 ms */
  double at_peak_min_fraction;    /* share of the peak: 0.1 */
};

extern const struct finding_thresholds finding_defaults;

const char *finding_kind_name (enum finding_kind kind);

/* The findings of CONTEXT into OUT (at most FINDING_COUNT); returns how
   many.  HAS_ACCESSES is metrics_profile_has_accesses of its profile.  */
int findings_of (const struct profile_context *context, bool has_accesses,
                 const struct finding_thresholds *thresholds,
                 struct finding *out);

/* findings_of, but none for a context the system allocated for itself
   (origin.h's CONTEXT_FROM_SYSTEM) unless INCLUDE_SYSTEM: those are
   added to *HIDDEN instead.  */
int findings_shown_of (const struct profile_context *context, bool has_accesses,
                       bool include_system,
                       const struct finding_thresholds *thresholds,
                       struct finding *out, size_t *hidden);
/* The at-peak finding of CONTEXT into OUT: the contexts that make the
   heap's peak (at least THRESHOLDS->at_peak_min_fraction of it).  Returns
   0 or 1; 0 when PROFILE has no peak.  */
int finding_at_peak (const struct profile *profile,
                     const struct profile_context *context,
                     const struct finding_thresholds *thresholds,
                     struct finding *out);

#endif /* MEMPROF_ANALYSIS_METRICS_H */
