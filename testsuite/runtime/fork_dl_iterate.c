/* fork while another thread is inside dl_iterate_phdr (as a C++ throw
   is, through _Unwind_Find_FDE): a thread walks the loaded objects
   without pause, its callback sleeping a little on each, so that the
   loader's lock is nearly always held; the main thread forks 100 times,
   each child allocates, frees and exits (its exit writes its profile,
   or says why it cannot).  The runtime's fork handlers
   must not need that lock in the child (the thread that held it does not
   exist there): a child that hangs is a failure (the test's timeout).
   Prints "forked N" and exits with status 3.  */
#define _GNU_SOURCE
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FORKS 100

static atomic_int stop;
static atomic_int walking;

static int
slow_callback (struct dl_phdr_info *info, size_t size, void *data)
{
  struct timespec pause = { 0, 200 * 1000 };
  (void) info, (void) size, (void) data;
  atomic_store (&walking, 1);
  nanosleep (&pause, NULL);
  return 0;
}

static void *
walker (void *unused)
{
  (void) unused;
  while (!atomic_load (&stop))
    dl_iterate_phdr (slow_callback, NULL);
  return NULL;
}

/* Volatile: GCC may not remove a malloc whose block is only freed.  */
static void *volatile block;

int
main (void)
{
  pthread_t thread;
  int forked = 0;

  if (pthread_create (&thread, NULL, walker, NULL) != 0)
    return 1;
  while (!atomic_load (&walking))
    sched_yield ();
  for (int i = 0; i < FORKS; i++)
    {
      pid_t child = fork ();
      int status;
      if (child == 0)
        {
          block = malloc (100);
          free (block);
          exit (0);
        }
      if (child < 0 || waitpid (child, &status, 0) != child
          || !WIFEXITED (status) || WEXITSTATUS (status) != 0)
        break;
      forked++;
    }
  atomic_store (&stop, 1);
  pthread_join (thread, NULL);
  printf ("forked %d\n", forked);
  return 3;
}
