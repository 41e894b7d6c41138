/* The Check suites of the unit tests (testsuite/unit/test_*.c), run
   together by main.c.  The runtime's objects are linked in, so the real
   runtime runs inside the test program: malloc is libmemprof's and
   __memprof_shadow_base is set before main.  */

#ifndef MEMPROF_UNIT_H
#define MEMPROF_UNIT_H

#include <check.h>

Suite *options_suite (void);
Suite *shadow_suite (void);
Suite *depot_suite (void);
Suite *mib_suite (void);
Suite *rawformat_suite (void);
Suite *extraformat_suite (void);
Suite *profile_suite (void);
Suite *globals_suite (void);
Suite *trace_suite (void);
Suite *thresholds_suite (void);
Suite *fold_memo_suite (void);
Suite *slab_suite (void);
Suite *pcmap_suite (void);
Suite *clock_suite (void);
Suite *emergency_suite (void);

#endif /* MEMPROF_UNIT_H */
