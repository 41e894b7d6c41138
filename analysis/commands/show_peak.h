/* memprof show --metric=peak: the heap's high-water mark of the profile
   (what was live at the peak, when, how exact) and its timeline.  */

#ifndef MEMPROF_ANALYSIS_SHOW_PEAK_H
#define MEMPROF_ANALYSIS_SHOW_PEAK_H

#include <stdio.h>

#include "profile.h"

/* One paragraph for people: the peak, its time, its error; or that the
   profile has none.  */
void show_peak_text (FILE *out, const struct profile *profile);

/* The "peak" member of show's JSON (after a comma the caller printed):
   the peak, its error, and the timeline, whose top entries name contexts
   by their index (the records' "context").  */
void show_peak_json (FILE *out, const struct profile *profile);

#endif /* MEMPROF_ANALYSIS_SHOW_PEAK_H */
