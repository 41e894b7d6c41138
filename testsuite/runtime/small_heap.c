/* The always-on mode's small heap (small_heap=1): every entry point of
   the malloc family on its blocks and on glibc's, and the cases an
   allocator of its own must get right: realloc both ways between the two
   kinds (contents kept), calloc's zeros on a reused block, the aligned
   allocators, malloc_usable_size, blocks freed by another thread
   (contents intact, memory bounded), threads that exit holding blocks,
   threads that only free and exit (what they freed is reused), fork
   (the child allocates and frees the parent's blocks), a double free
   (aborts, as with glibc's tcache), and memory given back to the kernel
   once the program frees a lot.

   Argument: 1 when the blocks sampling leaves out must be the small
   heap's (a mapping of 64 GiB holds a 24-byte block), 0 when they must
   not.  Prints "small heap: ok" and the number of checks; exits 1 at the
   first wrong value.  */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static long checks;

static void
check (int ok, const char *what, long i)
{
  checks++;
  if (!ok)
    {
      printf ("wrong: %s at %ld\n", what, i);
      fflush (stdout);
      _exit (1);
    }
}

/* Is ADDRESS in a mapping of 64 GiB or more (the small heap's range)?  */
static int
in_large_mapping (const void *address)
{
  FILE *maps = fopen ("/proc/self/maps", "r");
  char line[512];
  int found = 0;
  uintptr_t at = (uintptr_t) address;
  while (maps && fgets (line, sizeof line, maps))
    {
      unsigned long low, high;
      if (sscanf (line, "%lx-%lx", &low, &high) == 2 && at >= low && at < high)
        found = high - low >= (64UL << 30);
    }
  if (maps)
    fclose (maps);
  return found;
}

/* The resident set in MiB.  */
static long
resident_mib (void)
{
  long pages = 0, resident = 0;
  FILE *statm = fopen ("/proc/self/statm", "r");
  if (statm && fscanf (statm, "%ld %ld", &pages, &resident) != 2)
    resident = 0;
  if (statm)
    fclose (statm);
  return resident * sysconf (_SC_PAGESIZE) / (1 << 20);
}

static void
fill (unsigned char *block, size_t size, unsigned seed)
{
  for (size_t i = 0; i < size; i++)
    block[i] = (unsigned char) (seed + i * 7);
}

static int
filled (const unsigned char *block, size_t size, unsigned seed)
{
  for (size_t i = 0; i < size; i++)
    if (block[i] != (unsigned char) (seed + i * 7))
      return 0;
  return 1;
}

__attribute__ ((noinline)) static void *
allocate (size_t size)
{
  return malloc (size);
}

static void
entry_points (void)
{
  /* Every size up to and past the small heap's classes.  */
  static unsigned char *blocks[600];
  for (size_t size = 0; size < 600; size++)
    {
      blocks[size] = allocate (size);
      check (blocks[size] != NULL, "malloc", (long) size);
      check (malloc_usable_size (blocks[size]) >= size, "usable size",
             (long) size);
      check ((uintptr_t) blocks[size] % 16 == 0, "malloc's alignment",
             (long) size);
      fill (blocks[size], size, (unsigned) size);
    }
  for (size_t size = 0; size < 600; size++)
    {
      check (filled (blocks[size], size, (unsigned) size), "contents",
             (long) size);
      free (blocks[size]);
    }

  /* calloc on blocks just freed with other bytes in them.  */
  for (size_t size = 1; size <= 512; size += 7)
    {
      unsigned char *dirty = allocate (size);
      memset (dirty, 0xa5, size);
      free (dirty);
      unsigned char *zero = calloc (1, size);
      check (zero != NULL, "calloc", (long) size);
      for (size_t i = 0; i < size; i++)
        check (zero[i] == 0, "calloc's zeros", (long) size);
      free (zero);
    }
  volatile size_t huge = SIZE_MAX / 2;
  check (calloc (huge, 4) == NULL, "calloc's overflow", 0);

  /* realloc: growing through the classes into glibc's sizes and back,
     shrinking in place, to 0.  */
  unsigned char *block = allocate (1);
  fill (block, 1, 3);
  size_t size = 1;
  for (size_t next = 2; next <= 4096; next = next * 3 / 2 + 1)
    {
      block = realloc (block, next);
      check (block != NULL, "realloc up", (long) next);
      check (filled (block, size, 3), "realloc up keeps", (long) next);
      fill (block, next, 3);
      size = next;
    }
  for (size_t next = size; next >= 1; next = next / 2)
    {
      block = realloc (block, next);
      check (block != NULL, "realloc down", (long) next);
      check (filled (block, next, 3), "realloc down keeps", (long) next);
      size = next;
      if (next == 1)
        break;
    }
  check (realloc (block, 0) == NULL, "realloc to 0", 0);
  block = realloc (NULL, 40);
  check (block != NULL && malloc_usable_size (block) >= 40, "realloc (NULL)",
         40);
  free (block);

  /* The aligned allocators, freed and resized by the others.  */
  for (size_t alignment = 16; alignment <= 4096; alignment *= 2)
    for (size_t bytes = 8; bytes <= 300; bytes += 73)
      {
        void *aligned = memalign (alignment, bytes);
        check (aligned && (uintptr_t) aligned % alignment == 0, "memalign",
               (long) alignment);
        check (malloc_usable_size (aligned) >= bytes, "memalign's size",
               (long) bytes);
        fill (aligned, bytes, 9);
        aligned = realloc (aligned, bytes + 20);
        check (aligned && filled (aligned, bytes, 9), "memalign's realloc",
               (long) alignment);
        free (aligned);
        void *other = aligned_alloc (alignment, bytes);
        check (other && (uintptr_t) other % alignment == 0, "aligned_alloc",
               (long) alignment);
        free (other);
        void *posix = NULL;
        check (posix_memalign (&posix, alignment, bytes) == 0 && posix
                   && (uintptr_t) posix % alignment == 0,
               "posix_memalign", (long) alignment);
        free (posix);
      }
  void *page = valloc (100);
  check (page && (uintptr_t) page % sysconf (_SC_PAGESIZE) == 0, "valloc", 0);
  free (page);
}

/* Producer and consumer: blocks made on one thread, checked and freed
   on another.  */
#define QUEUE 4096
#define HANDED 400000
static void *queue[QUEUE];
static size_t queue_size[QUEUE];
static unsigned head, tail;
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_changed = PTHREAD_COND_INITIALIZER;

static void *
producer (void *unused)
{
  (void) unused;
  for (long i = 0; i < HANDED; i++)
    {
      size_t size = 1 + (size_t) (i * 37) % 300;
      unsigned char *block = allocate (size);
      check (block != NULL, "producer's malloc", i);
      fill (block, size, (unsigned) i);
      pthread_mutex_lock (&queue_lock);
      while (head - tail == QUEUE)
        pthread_cond_wait (&queue_changed, &queue_lock);
      queue[head % QUEUE] = block;
      queue_size[head % QUEUE] = size;
      head++;
      pthread_cond_broadcast (&queue_changed);
      pthread_mutex_unlock (&queue_lock);
    }
  return NULL;
}

static void *
consumer (void *unused)
{
  (void) unused;
  for (long i = 0; i < HANDED; i++)
    {
      pthread_mutex_lock (&queue_lock);
      while (head == tail)
        pthread_cond_wait (&queue_changed, &queue_lock);
      unsigned char *block = queue[tail % QUEUE];
      size_t size = queue_size[tail % QUEUE];
      tail++;
      pthread_cond_broadcast (&queue_changed);
      pthread_mutex_unlock (&queue_lock);
      check (filled (block, size, (unsigned) i), "handed block intact", i);
      free (block);
    }
  return NULL;
}

/* Threads that exit with blocks still live and blocks in their lists.  */
#define KEPT 2000
static void *kept[64][KEPT];

static void *
short_lived (void *argument)
{
  long thread = (long) argument;
  for (long i = 0; i < KEPT; i++)
    {
      kept[thread][i] = allocate (1 + (size_t) (i % 256));
      fill (kept[thread][i], 1 + (size_t) (i % 256), (unsigned) (thread + i));
    }
  /* Half freed here: they stay in this thread's lists until it exits.  */
  for (long i = 0; i < KEPT; i += 2)
    {
      free (kept[thread][i]);
      kept[thread][i] = NULL;
    }
  return NULL;
}

static void
threads (void)
{
  pthread_t made, used;
  pthread_create (&made, NULL, producer, NULL);
  pthread_create (&used, NULL, consumer, NULL);
  pthread_join (made, NULL);
  pthread_join (used, NULL);

  for (int wave = 0; wave < 4; wave++)
    {
      pthread_t waves[16];
      for (long t = 0; t < 16; t++)
        pthread_create (&waves[t], NULL, short_lived, (void *) (wave * 16 + t));
      for (long t = 0; t < 16; t++)
        pthread_join (waves[t], NULL);
    }
  /* The blocks left by the exited threads, checked and freed here; and
     new ones, which may be the exited threads' freed blocks.  */
  for (long thread = 0; thread < 64; thread++)
    for (long i = 1; i < KEPT; i += 2)
      {
        check (filled (kept[thread][i], 1 + (size_t) (i % 256),
                       (unsigned) (thread + i)),
               "block of an exited thread", i);
        free (kept[thread][i]);
      }
  static void *again[64 * KEPT];
  for (long i = 0; i < 64 * KEPT; i++)
    {
      again[i] = allocate (1 + (size_t) (i % 256));
      memset (again[i], 0x5a, 1 + (size_t) (i % 256));
    }
  for (long i = 0; i < 64 * KEPT; i++)
    free (again[i]);
}

/* Threads that only free (the blocks the main thread made) and exit:
   what they freed is given back at their exit, so that the resident set
   stays bounded however many come and go.  */
#define FREED_CLASSES 16
#define FREED_EACH 400
static void *to_free[FREED_CLASSES * FREED_EACH];

static void *
only_frees (void *unused)
{
  (void) unused;
  for (long i = 0; i < FREED_CLASSES * FREED_EACH; i++)
    free (to_free[i]);
  return NULL;
}

static void
freeing_threads (void)
{
  long settled = 0;
  for (int round = 0; round < 300; round++)
    {
      for (long i = 0; i < FREED_CLASSES * FREED_EACH; i++)
        {
          size_t size = 16 * (size_t) (i % FREED_CLASSES + 1);
          to_free[i] = allocate (size);
          memset (to_free[i], round, size);
        }
      pthread_t thread;
      pthread_create (&thread, NULL, only_frees, NULL);
      pthread_join (thread, NULL);
      if (round == 10)
        settled = resident_mib ();
    }
  check (resident_mib () - settled < 32,
         "blocks freed by exited threads reused", resident_mib () - settled);
}

/* A double free, in a child: glibc's tcache aborts the program; the
   small heap must too, rather than hand the block out twice.  */
static void
double_free (void)
{
  fflush (stdout);
  pid_t child = fork ();
  if (child == 0)
    {
      void *blocks[10];
      for (int i = 0; i < 10; i++)
        blocks[i] = allocate (32);
      free (blocks[9]);
      free (blocks[8]);
      free (blocks[9]);
      /* Not reached: the same block three times over otherwise.  */
      void *first = allocate (32), *second = allocate (32);
      _exit (first == second ? 3 : 4);
    }
  int status = 0;
  check (child > 0 && waitpid (child, &status, 0) == child
             && WIFSIGNALED (status) && WTERMSIG (status) == SIGABRT,
         "a double free aborts",
         WIFEXITED (status) ? WEXITSTATUS (status) : -1);
}

static void
forked (void)
{
  static unsigned char *parents[1000];
  for (long i = 0; i < 1000; i++)
    {
      parents[i] = allocate (1 + (size_t) (i % 200));
      fill (parents[i], 1 + (size_t) (i % 200), (unsigned) i);
    }
  fflush (stdout);
  pid_t child = fork ();
  if (child == 0)
    {
      for (long i = 0; i < 1000; i++)
        {
          check (filled (parents[i], 1 + (size_t) (i % 200), (unsigned) i),
                 "the parent's block in the child", i);
          free (parents[i]);
        }
      for (long i = 0; i < 100000; i++)
        free (allocate (1 + (size_t) (i % 256)));
      _exit (7);
    }
  int status = 0;
  check (child > 0 && waitpid (child, &status, 0) == child && WIFEXITED (status)
             && WEXITSTATUS (status) == 7,
         "the child's exit", 0);
  for (long i = 0; i < 1000; i++)
    {
      check (filled (parents[i], 1 + (size_t) (i % 200), (unsigned) i),
             "the parent's block after fork", i);
      free (parents[i]);
    }
}

/* 256 MiB of 32-byte blocks freed: the small heap gives most of it
   back.  */
static void
given_back (int small_heap)
{
  enum
  {
    COUNT = 8 << 20
  };
  void **blocks = malloc (COUNT * sizeof *blocks);
  memset (blocks, 0, COUNT * sizeof *blocks);
  long before = resident_mib ();
  for (long i = 0; i < COUNT; i++)
    {
      blocks[i] = allocate (32);
      memset (blocks[i], 1, 32);
    }
  long full = resident_mib ();
  for (long i = 0; i < COUNT; i++)
    free (blocks[i]);
  long after = resident_mib ();
  free (blocks);
  check (full - before >= 200, "256 MiB resident", full - before);
  if (small_heap)
    check (after - before < 64, "freed blocks given back", after - before);
}

int
main (int argc, char **argv)
{
  int small_heap = argc > 1 && atoi (argv[1]);
  /* Sampling records a few (a site's first block always).  */
  static void *probes[100];
  int in_range = 0;
  for (int i = 0; i < 100; i++)
    probes[i] = allocate (24);
  for (int i = 0; i < 100; i++)
    {
      in_range += in_large_mapping (probes[i]);
      free (probes[i]);
    }
  check (small_heap ? in_range >= 90 : in_range == 0,
         small_heap ? "blocks of the small heap" : "blocks of glibc's",
         in_range);
  entry_points ();
  threads ();
  freeing_threads ();
  forked ();
  double_free ();
  given_back (small_heap);
  printf ("small heap: ok\n");
  return 0;
}
