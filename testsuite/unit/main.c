/* Runs every unit test suite; exits with failure if any test failed.  */

#include <stdlib.h>

#include "unit.h"

int
main (void)
{
  SRunner *runner = srunner_create (options_suite ());
  int failed;

  srunner_add_suite (runner, shadow_suite ());
  srunner_add_suite (runner, depot_suite ());
  srunner_add_suite (runner, mib_suite ());
  srunner_add_suite (runner, rawformat_suite ());
  srunner_add_suite (runner, extraformat_suite ());
  srunner_add_suite (runner, profile_suite ());
  srunner_add_suite (runner, globals_suite ());
  srunner_add_suite (runner, trace_suite ());
  srunner_add_suite (runner, thresholds_suite ());
  srunner_add_suite (runner, fold_memo_suite ());
  srunner_add_suite (runner, slab_suite ());
  srunner_add_suite (runner, pcmap_suite ());
  srunner_add_suite (runner, clock_suite ());
  srunner_add_suite (runner, emergency_suite ());
  srunner_run_all (runner, CK_NORMAL);
  failed = srunner_ntests_failed (runner);
  srunner_free (runner);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
