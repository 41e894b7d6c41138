/* Metrics, ranking and findings: see metrics.h and docs/analysis.md.  */

#include "metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "origin.h"
#include "util.h"

const struct finding_thresholds finding_defaults = {
  .over_reserved_fraction = 0.5,
  .over_reserved_min_bytes = 4096,
  .short_lived_min_allocs = 1000,
  .short_lived_max_size = 256,
  .short_lived_max_ms = 1,
  .at_peak_min_fraction = 0.1,
};

static const char *const sort_keys[]
    = { "bytes", "allocs", "accesses", "density", "lifetime", "waste", "peak" };
const char sort_key_names[]
    = "bytes|allocs|accesses|density|lifetime|waste|peak";

int
sort_key_parse (const char *name)
{
  for (size_t i = 0; i < sizeof sort_keys / sizeof sort_keys[0]; i++)
    if (strcmp (name, sort_keys[i]) == 0)
      return (int) i;
  return -1;
}

const char *
sort_key_name (enum sort_key key)
{
  return sort_keys[key];
}

bool
metrics_untouched_known (const struct profile_context *context,
                         bool has_accesses)
{
  return has_accesses && context->extra.access_sample_rate <= 1
         && !(context->origin & CONTEXT_UNCOUNTED_CALLER);
}

bool
metrics_profile_has_accesses (const struct profile *profile)
{
  for (size_t i = 0; i < profile->context_count; i++)
    if (profile->contexts[i].mib.total_access_count > 0)
      return true;
  return false;
}

/* The share of a context's bytes its summed histogram shows untouched:
   a value that stayed 0 over every allocation was never touched.  */
static double
histogram_untouched_share (const struct profile_context *context)
{
  uint32_t size = context->mib.access_histogram_size, zero = 0;
  for (uint32_t i = 0; i < size; i++)
    zero += context->histogram[i] == 0;
  return size ? (double) zero / size : 0;
}

void
metrics_of (const struct profile_context *context, bool has_accesses,
            struct metrics *m)
{
  const struct memprof_mib *mib = &context->mib;
  double count = mib->alloc_count ? mib->alloc_count : 1;
  memset (m, 0, sizeof *m);
  m->bytes = (double) mib->total_size;
  m->allocs = mib->alloc_count;
  m->accesses = (double) mib->total_access_count;
  m->density = m->bytes > 0 ? m->accesses / m->bytes : 0;
  m->lifetime_ms = (double) mib->total_lifetime / count;
  m->mean_size = m->bytes / count;
  m->lifetime_density
      = (double) mib->total_lifetime_access_density / count / 100.0;
  m->peak_bytes = (double) context->peak_bytes;
  m->peak_blocks = (double) context->peak_blocks;
  if (!metrics_untouched_known (context, has_accesses))
    return;
  if (context->has_extra)
    {
      double touched = (double) context->extra.touched_bytes;
      m->waste = touched < m->bytes ? m->bytes - touched : 0;
      m->waste_known = true;
    }
  else if (context->histogram != NULL && mib->access_histogram_size > 0)
    {
      m->waste = m->bytes * histogram_untouched_share (context);
      m->waste_known = true;
    }
  else if (mib->total_access_count == 0)
    {
      m->waste = m->bytes;
      m->waste_known = true;
    }
}

static double
metric_value (const struct metrics *m, enum sort_key key)
{
  switch (key)
    {
    case SORT_BYTES:
      return m->bytes;
    case SORT_ALLOCS:
      return m->allocs;
    case SORT_ACCESSES:
      return m->accesses;
    case SORT_DENSITY:
      return m->density;
    case SORT_LIFETIME:
      return m->lifetime_ms;
    case SORT_WASTE:
      return m->waste;
    case SORT_PEAK:
      return m->peak_bytes;
    }
  return 0;
}

struct ranked
{
  double value, bytes;
  uint32_t index;
  bool unknown; /* the value cannot be told: ranked after every known one */
};

static int
compare_ranked (const void *a, const void *b)
{
  const struct ranked *x = a, *y = b;
  if (x->unknown != y->unknown)
    return x->unknown ? 1 : -1;
  if (x->value != y->value)
    return x->value > y->value ? -1 : 1;
  if (x->bytes != y->bytes)
    return x->bytes > y->bytes ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

uint32_t *
metrics_rank (const struct profile *profile, enum sort_key key)
{
  size_t count = profile->context_count;
  struct ranked *ranked = xmalloc (count * sizeof *ranked + 1);
  uint32_t *order = xmalloc (count * sizeof *order + 1);
  bool has_accesses = metrics_profile_has_accesses (profile);
  for (size_t i = 0; i < count; i++)
    {
      struct metrics m;
      const struct profile_context *context = &profile->contexts[i];
      metrics_of (context, has_accesses, &m);
      ranked[i].value = metric_value (&m, key);
      ranked[i].unknown = key == SORT_WASTE && !m.waste_known;
      ranked[i].bytes = m.bytes;
      ranked[i].index = (uint32_t) i;
    }
  qsort (ranked, count, sizeof *ranked, compare_ranked);
  for (size_t i = 0; i < count; i++)
    order[i] = ranked[i].index;
  free (ranked);
  return order;
}

static const char *const finding_names[FINDING_COUNT]
    = { "never-touched", "over-reserved", "short-lived", "leaked", "at-peak" };

const char *
finding_kind_name (enum finding_kind kind)
{
  return finding_names[kind];
}

int
findings_shown_of (const struct profile_context *context, bool has_accesses,
                   bool include_system, const struct finding_thresholds *t,
                   struct finding *out, size_t *hidden)
{
  int count = findings_of (context, has_accesses, t, out);
  if (include_system || !(context->origin & CONTEXT_FROM_SYSTEM))
    return count;
  *hidden += (size_t) count;
  return 0;
}

int
findings_of (const struct profile_context *context, bool has_accesses,
             const struct finding_thresholds *t, struct finding *out)
{
  const struct memprof_mib *mib = &context->mib;
  struct metrics m;
  char size[32], other[32];
  int count = 0;

  metrics_of (context, has_accesses, &m);
  double untouched_allocs = 0;
  /* Untouched is only told when every access could be counted.  */
  bool untouched_known = metrics_untouched_known (context, has_accesses);
  if (untouched_known)
    {
      if (mib->total_access_count == 0)
        untouched_allocs = m.allocs;
      else if (context->has_extra)
        untouched_allocs = (double) context->extra.untouched_allocations;
    }
  if (untouched_allocs > 0)
    {
      struct finding *f = &out[count++];
      f->kind = FINDING_NEVER_TOUCHED;
      f->bytes = untouched_allocs * m.mean_size;
      if (untouched_allocs >= m.allocs)
        snprintf (f->text, sizeof f->text,
                  "never touched: %s allocated in %.0f allocation%s that no "
                  "access ever reached",
                  format_bytes (m.bytes, size, sizeof size), m.allocs,
                  m.allocs == 1 ? "" : "s");
      else
        snprintf (f->text, sizeof f->text,
                  "never touched: %.0f of %.0f allocations (about %s) no "
                  "access ever reached",
                  untouched_allocs, m.allocs,
                  format_bytes (f->bytes, size, sizeof size));
    }
  else if (untouched_known && !context->has_extra && mib->min_access_count == 0)
    {
      struct finding *f = &out[count++];
      f->kind = FINDING_NEVER_TOUCHED;
      f->bytes = mib->min_size;
      snprintf (f->text, sizeof f->text,
                "never touched: at least one of %.0f allocations no access "
                "ever reached",
                m.allocs);
    }

  /* Over-reserved: of the allocations that were touched, most of the
     bytes were not.  */
  if (untouched_known && m.waste_known && untouched_allocs < m.allocs)
    {
      double touched_allocs_bytes = m.bytes - untouched_allocs * m.mean_size;
      double unused = m.waste - untouched_allocs * m.mean_size;
      if (unused > 0 && touched_allocs_bytes > 0
          && unused >= t->over_reserved_min_bytes
          && unused / touched_allocs_bytes >= t->over_reserved_fraction)
        {
          struct finding *f = &out[count++];
          f->kind = FINDING_OVER_RESERVED;
          f->bytes = unused;
          snprintf (f->text, sizeof f->text,
                    "over-reserved: %.0f%% of the bytes (%s of %s) were "
                    "never touched: allocated larger than used",
                    100 * unused / touched_allocs_bytes,
                    format_bytes (unused, size, sizeof size),
                    format_bytes (touched_allocs_bytes, other, sizeof other));
        }
    }

  if (m.allocs >= t->short_lived_min_allocs
      && m.mean_size <= t->short_lived_max_size
      && m.lifetime_ms < t->short_lived_max_ms)
    {
      struct finding *f = &out[count++];
      f->kind = FINDING_SHORT_LIVED;
      /* What the allocator's bookkeeping costs them: about 16 bytes each.  */
      f->bytes = m.allocs * 16;
      snprintf (f->text, sizeof f->text,
                "short-lived: %.0f allocations of %.0f bytes on average, each "
                "freed within %.2f ms: reuse or batch them",
                m.allocs, m.mean_size, m.lifetime_ms);
    }

  if (context->has_extra && context->extra.live_allocations > 0)
    {
      struct finding *f = &out[count++];
      f->kind = FINDING_LEAKED;
      f->bytes = (double) context->extra.live_bytes;
      snprintf (f->text, sizeof f->text,
                "leaked: %llu allocation%s (%s) still live at exit",
                (unsigned long long) context->extra.live_allocations,
                context->extra.live_allocations == 1 ? "" : "s",
                format_bytes (f->bytes, size, sizeof size));
    }
  return count;
}

int
finding_at_peak (const struct profile *profile,
                 const struct profile_context *context,
                 const struct finding_thresholds *t, struct finding *out)
{
  char size[32], peak[32];
  double bytes = (double) context->peak_bytes;
  double total = (double) profile->peak.bytes;
  if (total <= 0 || bytes <= 0 || bytes < t->at_peak_min_fraction * total)
    return 0;
  out->kind = FINDING_AT_PEAK;
  out->bytes = bytes;
  snprintf (out->text, sizeof out->text,
            "at the peak: %s live in %llu block%s, %.0f%% of the heap's "
            "%s peak at %.1f ms",
            format_bytes (bytes, size, sizeof size),
            (unsigned long long) context->peak_blocks,
            context->peak_blocks == 1 ? "" : "s", 100 * bytes / total,
            format_bytes (total, peak, sizeof peak),
            (double) profile->peak.time_us / 1000.0);
  return 1;
}
