/* fork while another thread changes the interceptors' lists of code
   ranges: the child must not inherit the lock held or the generation odd
   (its dlopen of an instrumented library then waited forever, its
   interceptors' calls went uncounted).  Deterministic: this program
   defines memmem, which the runtime calls (through the PLT) while it
   examines a new module, under its lock with the generation odd; the
   loader thread's memmem says so and sleeps 100 ms, and the main thread
   forks meanwhile.  The child dlopens libreuse_counted.so (built with
   the plugin) under alarm (5 s) and exits 0; prints "child 0".
   With the argument "count", the main thread does not fork: it calls
   strlen CALLS times on a 64-byte heap block from victim_alloc while the
   loader is in the window; each call waits for the writer and counts (8
   each: TotalAccessCount 8 * CALLS + 64), none is lost.  */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CALLS 1000
static atomic_int armed, in_window;
static size_t (*volatile length) (const char *) = strlen;

__attribute__ ((noinline)) static char *
victim_alloc (void)
{
  return malloc (64);
}

void *
memmem (const void *haystack, size_t size, const void *needle, size_t length)
{
  const char *h = haystack;
  if (atomic_load (&armed) && !atomic_exchange (&in_window, 1))
    {
      struct timespec pause = { 0, 100 * 1000 * 1000 };
      nanosleep (&pause, NULL);
    }
  for (size_t i = 0; length <= size && i <= size - length; i++)
    if (memcmp (h + i, needle, length) == 0)
      return (void *) (h + i);
  return NULL;
}

static void *
loader (void *unused)
{
  (void) unused;
  atomic_store (&armed, 1);
  if (dlopen ("./libreuse_helper.so", RTLD_NOW) == NULL)
    exit (3);
  return NULL;
}

int
main (int argc, char **argv)
{
  char *block = victim_alloc ();
  for (int i = 0; i < 63; i++)
    block[i] = 'a';
  block[63] = 0;
  pthread_t thread;
  pthread_create (&thread, NULL, loader, NULL);
  while (!atomic_load (&in_window))
    ;
  if (argc > 1 && strcmp (argv[1], "count") == 0)
    {
      size_t total = 0;
      for (int i = 0; i < CALLS; i++)
        total += length (block);
      pthread_join (thread, NULL);
      printf ("length %zu\n", total);
      free (block);
      return 0;
    }
  pid_t child = fork ();
  if (child == 0)
    {
      alarm (5);
      if (dlopen ("./libreuse_counted.so", RTLD_NOW) == NULL)
        _exit (4);
      _exit (0);
    }
  int status;
  waitpid (child, &status, 0);
  pthread_join (thread, NULL);
  free (block);
  printf ("child %d\n",
          WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status));
  return 0;
}
