/* The public API: memprof_dump writes a complete profile now,
   memprof_reset forgets what was recorded, options can be read and set.
   Run with profile_file=DIR/api.%n so that each dump has its own file.  */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <memprof/interface.h>

#include "../compat/touch.h"

__attribute__ ((noinline)) static void
churn (int count)
{
  for (int i = 0; i < count; i++)
    {
      char *block = malloc (100);
      touch (block, 1);
      free (block);
    }
}

int
main (void)
{
  char value[64];
  int status = 0;

  churn (3);
  char *kept = malloc (200); /* live across both dumps */
  touch (kept, 4);
  if (memprof_dump () != 0)
    status |= 1;
  memprof_reset ();
  churn (2);

  if (memprof_get_option ("max_stack_depth", value, sizeof value) != 2
      || strcmp (value, "30") != 0)
    status |= 2;
  if (memprof_set_option ("max_stack_depth=12") != 0)
    status |= 4;
  memprof_get_option ("max_stack_depth", value, sizeof value);
  if (strcmp (value, "12") != 0)
    status |= 8;
  if (memprof_set_option ("max_stack_depth=9999") != -1) /* out of range */
    status |= 16;
  if (memprof_set_option ("no_such_option=1") != -1)
    status |= 32;
  if (memprof_get_option ("no_such_option", value, sizeof value) != -1)
    status |= 64;
  memprof_get_option ("max_stack_depth", value, sizeof value);
  if (strcmp (value, "12") != 0) /* a bad value changes nothing */
    status |= 128;
  printf ("api status %d\n", status);
  free (kept);
  return status;
}
