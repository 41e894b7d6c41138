/* hot_cold_mix: hot objects allocated among cold ones, the case hot/cold
   allocation hints are for.  bench/hint_effect.py builds it three ways
   (glibc; jemalloc through libmemprof_hint with no hinted calls; the hot
   and cold calls hinted) and compares.

   Phase 1 allocates HOT_COUNT hot nodes (48 bytes: a link and a payload
   the traversal reads), and after each one COLD_PER_HOT cold records of a
   few sizes (40, 48, 64 and 160 bytes: two of them in the hot nodes' size
   class), written once and kept alive, never read again.  Phase 2 links
   the hot nodes into one ring in a fixed pseudo-random order, as a hash
   chain or a tree built from unordered keys would be, and walks the ring
   PASSES times.  It prints the walk's time per node, the number of
   distinct 4 KiB pages the hot nodes span (from their own addresses), the
   time phase 1 took and the process's peak RSS.

   bench/hint_effect.py's hinted build is made by profile feedback
   (-fplugin-arg-memprof-use), which rewrites the two malloc calls below
   by the class of their contexts: nothing in this file is hinted.

   Usage: hot_cold_mix [HOT_COUNT [PASSES]]  */

#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

#define COLD_PER_HOT 3
#define PAGE_SHIFT 12

struct node
{
  struct node *next;
  uint64_t key;
  uint64_t payload[4];
};

static const size_t cold_sizes[] = { 40, 48, 64, 160 };
#define COLD_SIZES (sizeof cold_sizes / sizeof cold_sizes[0])

/* The benchmark's own arrays come from mmap, so that they take no place
   among the objects measured.  */
static void *
map_array (size_t count, size_t size)
{
  void *array = mmap (NULL, count * size, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

  if (array == MAP_FAILED)
    {
      perror ("hot_cold_mix: mmap");
      exit (1);
    }
  return array;
}

static double
seconds (void)
{
  struct timespec now;

  clock_gettime (CLOCK_MONOTONIC, &now);
  return now.tv_sec + now.tv_nsec * 1e-9;
}

static int
compare_pages (const void *first, const void *second)
{
  uintptr_t a = *(const uintptr_t *) first, b = *(const uintptr_t *) second;

  return (a > b) - (a < b);
}

/* Distinct pages covered by the hot nodes, first byte to last.  */
static size_t
pages_spanned (struct node **nodes, size_t count)
{
  uintptr_t *pages = map_array (2 * count, sizeof *pages);
  size_t distinct = 0;

  for (size_t i = 0; i < count; i++)
    {
      pages[2 * i] = (uintptr_t) nodes[i] >> PAGE_SHIFT;
      pages[2 * i + 1]
          = ((uintptr_t) nodes[i] + sizeof (struct node) - 1) >> PAGE_SHIFT;
    }
  qsort (pages, 2 * count, sizeof *pages, compare_pages);
  for (size_t i = 0; i < 2 * count; i++)
    distinct += i == 0 || pages[i] != pages[i - 1];
  munmap (pages, 2 * count * sizeof *pages);
  return distinct;
}

int
main (int argc, char **argv)
{
  size_t hot_count = argc > 1 ? strtoul (argv[1], NULL, 10) : 1 << 19;
  int passes = argc > 2 ? atoi (argv[2]) : 10;
  struct node **nodes = map_array (hot_count, sizeof *nodes);
  void **cold = map_array (hot_count * COLD_PER_HOT, sizeof *cold);
  size_t *order = map_array (hot_count, sizeof *order);
  uint64_t random = 0x9e3779b97f4a7c15u, sum = 0;
  struct node *walker;
  struct rusage usage;
  double start, build_seconds, walked;

  /* Phase 1: hot and cold, interleaved.  */
  start = seconds ();
  for (size_t i = 0; i < hot_count; i++)
    {
      nodes[i] = malloc (sizeof (struct node));
      nodes[i]->key = i;
      for (int p = 0; p < 4; p++)
        nodes[i]->payload[p] = i * 4 + p;
      for (int c = 0; c < COLD_PER_HOT; c++)
        {
          size_t size = cold_sizes[(i * COLD_PER_HOT + c) % COLD_SIZES];
          void *record = malloc (size);

          memset (record, (int) (i + c), size);
          cold[i * COLD_PER_HOT + c] = record;
        }
    }
  build_seconds = seconds () - start;

  /* Phase 2: one ring in a fixed shuffled order (Fisher-Yates with an
     xorshift generator), then the walks.  */
  for (size_t i = 0; i < hot_count; i++)
    order[i] = i;
  for (size_t i = hot_count - 1; i > 0; i--)
    {
      size_t j, swap;

      random ^= random << 13, random ^= random >> 7, random ^= random << 17;
      j = random % (i + 1);
      swap = order[i], order[i] = order[j], order[j] = swap;
    }
  for (size_t i = 0; i < hot_count; i++)
    nodes[order[i]]->next = nodes[order[(i + 1) % hot_count]];

  walked = seconds ();
  walker = nodes[order[0]];
  for (int pass = 0; pass < passes; pass++)
    for (size_t i = 0; i < hot_count; i++)
      {
        sum += walker->payload[i & 3] + walker->key;
        walker = walker->next;
      }
  walked = seconds () - walked;

  getrusage (RUSAGE_SELF, &usage);
  printf ("hot_nodes %zu\n", hot_count);
  printf ("cold_records %zu\n", hot_count * COLD_PER_HOT);
  printf ("passes %d\n", passes);
  printf ("build_ms %.1f\n", build_seconds * 1e3);
  printf ("walk_ns_per_node %.2f\n",
          walked * 1e9 / ((double) hot_count * passes));
  printf ("hot_pages %zu\n", pages_spanned (nodes, hot_count));
  printf ("hot_pages_if_packed %zu\n",
          (hot_count * sizeof (struct node) + (1 << PAGE_SHIFT) - 1)
              >> PAGE_SHIFT);
  printf ("peak_rss_kib %ld\n", usage.ru_maxrss);
  printf ("checksum %llu\n", (unsigned long long) sum);
  return 0;
}
