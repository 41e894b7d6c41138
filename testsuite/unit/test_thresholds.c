/* Thresholds that fit the run (formats/feedback.c): what the run's length
   and median density are, and that the classes they give do not change
   when the same work runs slower (the instrumented slowdown) or longer.
   The profiles are made block by block with the MIB arithmetic the
   runtime uses (mib_init_one, mib_merge).  */

#include <stdlib.h>
#include <string.h>

#include "feedback.h"
#include "mib.h"
#include "unit.h"

enum
{
  TABLE,  /* 1 MiB written once at start-up, freed at the end */
  WINDOW, /* 4 KiB, 16384 reads a round, freed at the end */
  BUFFER, /* 16 KiB a round, 4096 accesses, freed after one time unit */
  SITES
};

/* The profile of ROUNDS rounds where a time unit lasts UNIT_MS (a
   slower run: a larger unit).  */
static void
simulate (struct feedback *feedback, uint32_t rounds, uint32_t unit_ms)
{
  static struct feedback_context contexts[SITES];
  uint32_t end = 2 * rounds * unit_ms + unit_ms;
  memset (contexts, 0, sizeof contexts);
  mib_init_one (&contexts[TABLE].mib, 1 << 20, 1 << 17, 0, end, 0, 0);
  mib_init_one (&contexts[WINDOW].mib, 4096, 16384ull * rounds, 0, end, 0, 0);
  for (uint32_t round = 0; round < rounds; round++)
    {
      struct memprof_mib one;
      uint32_t born = unit_ms + 2 * round * unit_ms;
      mib_init_one (&one, 16384, 4096, born, born + unit_ms, 0, 0);
      if (round == 0)
        contexts[BUFFER].mib = one;
      else
        mib_merge (&contexts[BUFFER].mib, &one);
    }
  memset (feedback, 0, sizeof *feedback);
  feedback->contexts = contexts;
  feedback->context_count = SITES;
}

static void
classify_all (const struct feedback *feedback, enum feedback_class *classes)
{
  struct feedback_run run;
  struct feedback_thresholds thresholds;
  feedback_measure_run (feedback, &run);
  feedback_fit_thresholds (&run, &feedback_default_run_thresholds, &thresholds);
  for (size_t i = 0; i < SITES; i++)
    classes[i] = feedback_classify (&feedback->contexts[i], &thresholds);
}

START_TEST (test_run_measured)
{
  struct feedback feedback;
  struct feedback_run run;
  simulate (&feedback, 100, 10);
  feedback_measure_run (&feedback, &run);
  /* From the first allocation (0) to the last free (2010 ms).  */
  ck_assert_double_eq_tol (run.length_ms, 2010, 0.5);
  /* The buffers' 1.6 MB are most of the accessed bytes: theirs is the
     median density, 4096 accesses / 16384 bytes / 10 ms = 25 per s.  */
  ck_assert_double_eq_tol (run.median_density, 25, 0.01);
}
END_TEST

START_TEST (test_never_accessed_left_out_of_median)
{
  struct feedback feedback;
  struct feedback_run run;
  simulate (&feedback, 100, 10);
  /* The buffers never accessed: the median is the table's (more bytes
     than the window), 0.125 accesses per byte over 2.01 s in the MIB's
     integer arithmetic (hundredths, truncated): 0.05.  */
  feedback.contexts[BUFFER].mib.total_lifetime_access_density = 0;
  feedback_measure_run (&feedback, &run);
  ck_assert_double_eq_tol (run.median_density, 0.05, 0.001);
  ck_assert_double_eq_tol (run.median_density,
                           feedback_density (&feedback.contexts[TABLE]), 1e-9);
}
END_TEST

START_TEST (test_slower_run_classifies_alike)
{
  struct feedback feedback;
  enum feedback_class real[SITES], slowed[SITES];
  simulate (&feedback, 100, 10);
  classify_all (&feedback, real);
  ck_assert_int_eq (real[TABLE], FEEDBACK_COLD);
  ck_assert_int_eq (real[WINDOW], FEEDBACK_HOT);
  ck_assert_int_eq (real[BUFFER], FEEDBACK_NOT_COLD);
  /* Five times slower, as an instrumented run is.  */
  simulate (&feedback, 100, 50);
  classify_all (&feedback, slowed);
  ck_assert_mem_eq (real, slowed, sizeof real);
  /* LLVM's absolute thresholds move with the slowdown: the window, hot
     at full speed, is not at a fifth of it.  */
  struct feedback_thresholds absolute = feedback_llvm_thresholds;
  absolute.hot_density = 100;
  simulate (&feedback, 100, 10);
  ck_assert_int_eq (feedback_classify (&feedback.contexts[WINDOW], &absolute),
                    FEEDBACK_HOT);
  simulate (&feedback, 100, 50);
  ck_assert_int_eq (feedback_classify (&feedback.contexts[WINDOW], &absolute),
                    FEEDBACK_NOT_COLD);
}
END_TEST

START_TEST (test_longer_run_classifies_alike)
{
  struct feedback feedback;
  enum feedback_class short_run[SITES], long_run[SITES];
  simulate (&feedback, 100, 10);
  classify_all (&feedback, short_run);
  simulate (&feedback, 10000, 10);
  classify_all (&feedback, long_run);
  ck_assert_mem_eq (short_run, long_run, sizeof short_run);
}
END_TEST

Suite *
thresholds_suite (void)
{
  Suite *suite = suite_create ("thresholds");
  TCase *tcase = tcase_create ("run");
  tcase_add_test (tcase, test_run_measured);
  tcase_add_test (tcase, test_never_accessed_left_out_of_median);
  tcase_add_test (tcase, test_slower_run_classifies_alike);
  tcase_add_test (tcase, test_longer_run_classifies_alike);
  suite_add_tcase (suite, tcase);
  return suite;
}
