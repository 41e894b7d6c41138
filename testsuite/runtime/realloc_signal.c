/* realloc of a sampled block mapped on its own by glibc (resized by
   mremap, which holds no lock of glibc's) while a timer's signal handler
   on the same thread allocates and frees sampled blocks: the handler's
   calls must not wait for the live set's lock the interrupted realloc
   holds.  Prints "ok" and exits 0; hangs (the test's time bound) when a
   handler waits for its own thread.  */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#define MIB (1024 * 1024)

static volatile unsigned long handled;

static void
handler (int signal_number)
{
  (void) signal_number;
  for (int i = 0; i < 2; i++)
    {
      volatile char *block = malloc (64 * 1024);
      if (block != NULL)
        block[0] = 1;
      free ((void *) block);
    }
  handled++;
}

__attribute__ ((noinline)) static char *
resize (char *block, size_t size)
{
  return realloc (block, size);
}

int
main (void)
{
  struct sigaction action;
  memset (&action, 0, sizeof action);
  action.sa_handler = handler;
  action.sa_flags = SA_RESTART;
  sigaction (SIGALRM, &action, NULL);
  struct itimerval every = { { 0, 500 }, { 0, 500 } };
  setitimer (ITIMER_REAL, &every, NULL);
  char *block = malloc (2 * MIB);
  for (long i = 0; i < 5000 && block != NULL; i++)
    {
      block = resize (block, (i & 1) ? 2 * MIB : 6 * MIB);
      if (block != NULL)
        block[0] = 1;
    }
  struct itimerval stop = { { 0, 0 }, { 0, 0 } };
  setitimer (ITIMER_REAL, &stop, NULL);
  if (block == NULL)
    {
      puts ("realloc failed");
      return 1;
    }
  free (block);
  printf ("ok\n");
  return 0;
}
