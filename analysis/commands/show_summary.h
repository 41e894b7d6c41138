/* The summary of `memprof show': how many contexts, how many of them hot
   and cold under the feedback's thresholds (LLVM's classification, as
   -fplugin-arg-memprof-use applies it), and the largest cold, warm
   (neither) and hot context, in the shape of llvm-profdata's MemProf
   summary.  */

#ifndef MEMPROF_ANALYSIS_SHOW_SUMMARY_H
#define MEMPROF_ANALYSIS_SHOW_SUMMARY_H

#include <stdint.h>
#include <stdio.h>

#include "profile.h"

struct show_summary
{
  uint64_t contexts, cold_contexts, hot_contexts;
  /* The largest TotalSize among the contexts of each class; 0 when the
     class has none.  */
  uint64_t max_cold_size, max_warm_size, max_hot_size;
};

void show_summary_of (const struct profile *profile,
                      struct show_summary *summary);

/* As text (a few lines for people), as a JSON object (the value of the
   "summary" key), and as llvm-profdata's YAML comment block.  */
void show_summary_print_text (const struct show_summary *summary, FILE *out);
void show_summary_print_json (const struct show_summary *summary, FILE *out);
void show_summary_print_yaml (const struct show_summary *summary, FILE *out);

#endif /* MEMPROF_ANALYSIS_SHOW_SUMMARY_H */
