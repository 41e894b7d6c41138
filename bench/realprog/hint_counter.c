/* Preloaded (LD_PRELOAD) into a run of a feedback build by
   bench/hint_real.py: counts the bytes that reach libmemprof_hint's
   hinted entry points, by class (a hint below 128 is cold, as in
   hint.c), and the distinct 4 KiB pages the hot-hinted blocks start on,
   and writes them at exit to the file $HINT_COUNTER_OUTPUT as
   "cold_bytes N", "hot_bytes N", "hot_pages N".  Each entry point
   forwards to the next definition (libmemprof_hint's).  Only the
   allocation entry points are counted; malloc and free are left alone,
   so that libmemprof_hint still finds jemalloc's free.  The
   context-classified entry points (__memprof_hint_context_*) are not
   wrapped: a wrapper's frame would be the first caller their walk sees,
   and so change the class they pick.  bench/hint_real.py takes their
   bytes by class from libmemprof_hint's own statistics
   (MEMPROF_HINT_STATS=1) instead.  */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGE_SHIFT 12
#define PAGE_SLOTS (1 << 20) /* open addressing; enough for 4 GiB */

static unsigned long long cold_bytes, hot_bytes, hot_pages;
static uintptr_t *pages;

static void
count (void *block, size_t size, int hint)
{
  if (block == NULL)
    return;
  if (hint < 128)
    {
      cold_bytes += size;
      return;
    }
  hot_bytes += size;
  if (pages == NULL)
    pages = calloc (PAGE_SLOTS, sizeof *pages);
  if (pages == NULL)
    return;
  uintptr_t page = ((uintptr_t) block >> PAGE_SHIFT) + 1;
  size_t slot = (page * 0x9e3779b97f4a7c15ULL) >> 44;
  while (pages[slot] != 0 && pages[slot] != page)
    slot = (slot + 1) & (PAGE_SLOTS - 1);
  if (pages[slot] == 0 && hot_pages < PAGE_SLOTS / 2)
    {
      pages[slot] = page;
      hot_pages++;
    }
}

#define NEXT(name) ((__typeof__ (&name)) dlsym (RTLD_NEXT, #name))

void *__memprof_hint_malloc (size_t size, unsigned char hint);
void *__memprof_hint_calloc (size_t count, size_t size, unsigned char hint);
void *__memprof_hint_realloc (void *old, size_t size, unsigned char hint);

void *
__memprof_hint_malloc (size_t size, unsigned char hint)
{
  void *block = NEXT (__memprof_hint_malloc) (size, hint);
  count (block, size, hint);
  return block;
}

void *
__memprof_hint_calloc (size_t n, size_t size, unsigned char hint)
{
  void *block = NEXT (__memprof_hint_calloc) (n, size, hint);
  count (block, n * size, hint);
  return block;
}

void *
__memprof_hint_realloc (void *old, size_t size, unsigned char hint)
{
  void *block = NEXT (__memprof_hint_realloc) (old, size, hint);
  count (block, size, hint);
  return block;
}

static void __attribute__ ((destructor)) report (void)
{
  const char *path = getenv ("HINT_COUNTER_OUTPUT");
  FILE *out = path ? fopen (path, "w") : NULL;
  if (out == NULL)
    return;
  fprintf (out, "cold_bytes %llu\nhot_bytes %llu\nhot_pages %llu\n", cold_bytes,
           hot_bytes, hot_pages);
  fclose (out);
}
