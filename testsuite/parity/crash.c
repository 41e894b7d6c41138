/* Profiles on abort and fatal signals.  argv[1] says how the program
   ends: "abort", "segv" (a store through a null pointer), "own-handler"
   (abort, with a SIGABRT handler of the program's own that exits 7),
   "threads" (abort while two threads allocate and free without pause),
   "exit" (returns 0).  Before that: 3 blocks of 100 bytes freed in
   churn, one of 200 bytes kept live and touched 5 times in keep.  */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "churn.h"

static char *volatile kept;
static volatile int *volatile null_pointer;

__attribute__ ((noipa)) static void
keep (void)
{
  kept = malloc (200);
  for (int i = 0; i < 5; i++)
    kept[i * 8] = (char) i;
}

static void
own_handler (int signal_number)
{
  (void) signal_number;
  write (1, "handled\n", 8);
  _exit (7);
}

static void *
allocate_forever (void *unused)
{
  (void) unused;
  for (;;)
    {
      char *volatile block = malloc (48);
      block[0] = 1;
      free (block);
    }
  return NULL;
}

int
main (int argc, char **argv)
{
  const char *mode = argc > 1 ? argv[1] : "exit";

  churn (3);
  keep ();
  printf ("ending by %s\n", mode);
  fflush (stdout);
  if (strcmp (mode, "abort") == 0)
    abort ();
  if (strcmp (mode, "segv") == 0)
    *null_pointer = 1;
  if (strcmp (mode, "own-handler") == 0)
    {
      signal (SIGABRT, own_handler);
      abort ();
    }
  if (strcmp (mode, "threads") == 0)
    {
      pthread_t threads[2];
      for (int i = 0; i < 2; i++)
        pthread_create (&threads[i], NULL, allocate_forever, NULL);
      usleep (50000);
      abort ();
    }
  return 0;
}
