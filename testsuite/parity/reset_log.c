/* memprof_reset and the log.  Run with log_path=LOG:print_text=1 and
   profile_file=DIR/r.%n.  argv[1]:
   "rename": 2 allocations, a dump (its text goes to LOG), LOG renamed to
     LOG.1, memprof_reset, 1 allocation, exit: the exit's text must go to
     a new LOG, not to LOG.1.
   "switch": 1 allocation, then log_path is set to argv[2] and the exit's
     text goes there.
   "quiet": print_text is set to 0 before exit: no text at exit.  */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <memprof/interface.h>

#include "churn.h"

int
main (int argc, char **argv)
{
  char option[4200];
  const char *mode = argc > 1 ? argv[1] : "";
  char log[4096];

  if (memprof_get_option ("log_path", log, sizeof log) < 0)
    return 1;
  if (strcmp (mode, "rename") == 0)
    {
      char renamed[4100];
      churn (2);
      memprof_dump ();
      snprintf (renamed, sizeof renamed, "%s.1", log);
      if (rename (log, renamed) != 0)
        return 2;
      memprof_reset ();
      churn (1);
    }
  else if (strcmp (mode, "switch") == 0 && argc > 2)
    {
      churn (1);
      snprintf (option, sizeof option, "log_path=%s", argv[2]);
      if (memprof_set_option (option) != 0)
        return 3;
    }
  else if (strcmp (mode, "quiet") == 0)
    {
      churn (1);
      memprof_set_option ("print_text=0");
    }
  puts ("reset_log done");
  return 0;
}
