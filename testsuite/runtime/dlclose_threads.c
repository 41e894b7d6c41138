/* dlclose on several threads at once, each on its own instrumented
   library, while other threads allocate and count: the runtime's module
   lists (modules.c), the interceptors' list of instrumented modules and
   the stack facts learnt per return address are changed by every
   dlclose, and read by every allocation.

   The arguments are CLOSERS library paths (copies of
   dlclose_reuse_lib.c built with the plugin, WORK=work): thread i opens
   its library, calls work 4 times from closer_round (4 blocks of 64
   bytes, each counted 16 times: its memcpy and its strlen), frees the
   blocks and closes the library, ROUNDS times.  CHURNERS threads
   meanwhile allocate 64-byte blocks from churn_block, write each byte
   once (64 accesses) and free them, until every closer is done.  Prints
   the count of churned blocks
   and exits with status 4.  */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CLOSERS 4
#define CHURNERS 2
#define ROUNDS 40
#define BLOCKS 4

typedef char *work_function (const char *, size_t);

static const char text[64]
    = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde";
static const char *library_path[CLOSERS];
static atomic_int closers_left = CLOSERS;
static atomic_long churned;

__attribute__ ((noinline)) static void
closer_round (work_function *work)
{
  char *blocks[BLOCKS];
  for (int i = 0; i < BLOCKS; i++)
    blocks[i] = work (text, sizeof text);
  for (int i = 0; i < BLOCKS; i++)
    free (blocks[i]);
}

static void *
closer (void *argument)
{
  const char *path = argument;
  for (int round = 0; round < ROUNDS; round++)
    {
      void *library = dlopen (path, RTLD_NOW | RTLD_LOCAL);
      work_function *work;
      if (library == NULL)
        {
          fprintf (stderr, "dlclose_threads: %s\n", dlerror ());
          exit (2);
        }
      work = (work_function *) dlsym (library, "work");
      if (work == NULL)
        exit (2);
      closer_round (work);
      dlclose (library);
    }
  atomic_fetch_sub (&closers_left, 1);
  return NULL;
}

__attribute__ ((noinline)) static void
churn_block (void)
{
  /* Volatile: GCC may not drop stores to a block freed next.  */
  volatile char *block = malloc (64);
  for (int i = 0; i < 64; i++)
    block[i] = (char) i;
  free ((void *) block);
}

static void *
churner (void *unused)
{
  (void) unused;
  while (atomic_load (&closers_left) > 0)
    {
      churn_block ();
      atomic_fetch_add (&churned, 1);
    }
  return NULL;
}

int
main (int argc, char **argv)
{
  pthread_t threads[CLOSERS + CHURNERS];
  if (argc != CLOSERS + 1)
    return 1;
  for (int i = 0; i < CLOSERS; i++)
    library_path[i] = argv[i + 1];
  for (int i = 0; i < CHURNERS; i++)
    pthread_create (&threads[CLOSERS + i], NULL, churner, NULL);
  for (int i = 0; i < CLOSERS; i++)
    pthread_create (&threads[i], NULL, closer, (void *) library_path[i]);
  for (int i = 0; i < CLOSERS + CHURNERS; i++)
    pthread_join (threads[i], NULL);
  printf ("churned %ld\n", atomic_load (&churned));
  return 4;
}
