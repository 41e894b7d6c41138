/* The summary of `memprof show' (show_summary.h).  */

#include <inttypes.h>
#include <string.h>

#include "feedback.h"
#include "show_summary.h"
#include "util.h"

void
show_summary_of (const struct profile *profile, struct show_summary *summary)
{
  memset (summary, 0, sizeof *summary);
  for (size_t c = 0; c < profile->context_count; c++)
    {
      /* feedback_classify reads only the MemInfoBlock.  */
      struct feedback_context context = { 0 };
      context.mib = profile->contexts[c].mib;
      uint64_t size = context.mib.total_size;
      summary->contexts++;
      switch (feedback_classify (&context, &feedback_llvm_thresholds))
        {
        case FEEDBACK_COLD:
          summary->cold_contexts++;
          if (size > summary->max_cold_size)
            summary->max_cold_size = size;
          break;
        case FEEDBACK_HOT:
          summary->hot_contexts++;
          if (size > summary->max_hot_size)
            summary->max_hot_size = size;
          break;
        case FEEDBACK_NOT_COLD:
          if (size > summary->max_warm_size)
            summary->max_warm_size = size;
          break;
        }
    }
}

void
show_summary_print_text (const struct show_summary *s, FILE *out)
{
  char cold[32], warm[32], hot[32];
  fprintf (out,
           "Summary: %" PRIu64 " hot, %" PRIu64 " cold, %" PRIu64
           " warm; the largest hot context %s, cold %s, warm %s\n"
           "  (the feedback's thresholds: hot above %g accesses per byte "
           "per second,\n  cold below %g living %g s or more)\n",
           s->hot_contexts, s->cold_contexts,
           s->contexts - s->hot_contexts - s->cold_contexts,
           format_bytes ((double) s->max_hot_size, hot, sizeof hot),
           format_bytes ((double) s->max_cold_size, cold, sizeof cold),
           format_bytes ((double) s->max_warm_size, warm, sizeof warm),
           feedback_llvm_thresholds.hot_density,
           feedback_llvm_thresholds.cold_density,
           feedback_llvm_thresholds.cold_lifetime_ms / 1000);
}

void
show_summary_print_json (const struct show_summary *s, FILE *out)
{
  fprintf (out,
           "{\"contexts\": %" PRIu64 ", \"cold_contexts\": %" PRIu64
           ", \"hot_contexts\": %" PRIu64
           ", \"max_cold_context_size\": %" PRIu64
           ", \"max_warm_context_size\": %" PRIu64
           ", \"max_hot_context_size\": %" PRIu64 "}",
           s->contexts, s->cold_contexts, s->hot_contexts, s->max_cold_size,
           s->max_warm_size, s->max_hot_size);
}

/* As llvm-profdata 21 prints it (MemProfSummary::printSummaryYaml): the
   document's start, then comments, which YAML readers skip.  */
void
show_summary_print_yaml (const struct show_summary *s, FILE *out)
{
  fprintf (out,
           "---\n# MemProfSummary:\n"
           "#   Total contexts: %" PRIu64 "\n"
           "#   Total cold contexts: %" PRIu64 "\n"
           "#   Total hot contexts: %" PRIu64 "\n"
           "#   Maximum cold context total size: %" PRIu64 "\n"
           "#   Maximum warm context total size: %" PRIu64 "\n"
           "#   Maximum hot context total size: %" PRIu64 "\n",
           s->contexts, s->cold_contexts, s->hot_contexts, s->max_cold_size,
           s->max_warm_size, s->max_hot_size);
}
