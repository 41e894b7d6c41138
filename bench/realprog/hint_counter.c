/* Preloaded (LD_PRELOAD) into a run of a feedback build by
   bench/hint_real.py: counts the bytes that reach libmemprof_hint's
   entry points, by class, and the distinct 4 KiB pages the hot blocks
   start on, and writes them at exit to the file $HINT_COUNTER_OUTPUT as
   "cold_bytes N", "hot_bytes N", "hot_pages N" (calls hinted at build
   time, __memprof_hint_*: a hint below 128 is cold, as in hint.c) and
   "context_cold_bytes N", "context_hot_bytes N", "context_default_bytes
   N", "context_hot_pages N" (calls classified by their calling context
   at run time, __memprof_hint_context_*).  The class a context call got
   is read from its table's counts of calls per class, which the library
   keeps when MEMPROF_HINT_STATS=1 (hint_real.py sets it): the count that
   grew across the call is the class.  Each entry point forwards to the
   next definition (libmemprof_hint's); a hinted call made inside a
   context call (the library's own, when it goes through the PLT) is not
   counted twice.  malloc and free are left alone, so that
   libmemprof_hint still finds jemalloc's free.  */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memprof/hint_context.h"

#define PAGE_SHIFT 12
#define PAGE_SLOTS (1 << 20) /* open addressing; enough for 4 GiB */

struct pages
{
  uintptr_t *slots;
  unsigned long long count;
};

static unsigned long long cold_bytes, hot_bytes;
static unsigned long long context_bytes[3]; /* default, cold, hot */
static struct pages hot_pages, context_hot_pages;
static __thread int inside_context;

static void
count_page (struct pages *pages, void *block)
{
  if (pages->slots == NULL)
    pages->slots = calloc (PAGE_SLOTS, sizeof *pages->slots);
  if (pages->slots == NULL)
    return;
  uintptr_t page = ((uintptr_t) block >> PAGE_SHIFT) + 1;
  size_t slot = (page * 0x9e3779b97f4a7c15ULL) >> 44;
  while (pages->slots[slot] != 0 && pages->slots[slot] != page)
    slot = (slot + 1) & (PAGE_SLOTS - 1);
  if (pages->slots[slot] == 0 && pages->count < PAGE_SLOTS / 2)
    {
      pages->slots[slot] = page;
      pages->count++;
    }
}

static void
count (void *block, size_t size, int hint)
{
  if (block == NULL || inside_context)
    return;
  if (hint < 128)
    {
      cold_bytes += size;
      return;
    }
  hot_bytes += size;
  count_page (&hot_pages, block);
}

/* The class of TABLE's call just made (0 default, 1 cold, 2 hot), from
   its counts of cold and hot calls BEFORE it.  */
static unsigned
context_class (const uint64_t *table, const uint64_t before[2])
{
  for (unsigned c = 0; c < 2; c++)
    if (table[MEMPROF_CONTEXT_WORD_CALLS + 1 + c] != before[c])
      return 1 + c;
  return 0;
}

static void
count_context (void *block, size_t size, unsigned class_index)
{
  if (block == NULL)
    return;
  context_bytes[class_index] += size;
  if (class_index == 2)
    count_page (&context_hot_pages, block);
}

#define NEXT(name) ((__typeof__ (&name)) dlsym (RTLD_NEXT, #name))

/* Calls TABLE's entry point as CALL, with the class it took in CLASS.  */
#define CONTEXT_CALL(table, call)                                              \
  ({                                                                           \
    uint64_t before[2] = { (table)[MEMPROF_CONTEXT_WORD_CALLS + 1],            \
                           (table)[MEMPROF_CONTEXT_WORD_CALLS + 2] };          \
    inside_context++;                                                          \
    __typeof__ (call) result = (call);                                         \
    inside_context--;                                                          \
    class_index = context_class ((table), before);                             \
    result;                                                                    \
  })

void *__memprof_hint_malloc (size_t size, unsigned char hint);
void *__memprof_hint_calloc (size_t count, size_t size, unsigned char hint);
void *__memprof_hint_realloc (void *old, size_t size, unsigned char hint);
void *__memprof_hint_context_malloc (size_t size, uint64_t *table);
void *__memprof_hint_context_calloc (size_t count, size_t size,
                                     uint64_t *table);
void *__memprof_hint_context_realloc (void *old, size_t size, uint64_t *table);
char *__memprof_hint_context_strdup (const char *string, uint64_t *table);
char *__memprof_hint_context_strndup (const char *string, size_t limit,
                                      uint64_t *table);

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

void *
__memprof_hint_context_malloc (size_t size, uint64_t *table)
{
  unsigned class_index;
  void *block = CONTEXT_CALL (
      table, NEXT (__memprof_hint_context_malloc) (size, table));
  count_context (block, size, class_index);
  return block;
}

void *
__memprof_hint_context_calloc (size_t n, size_t size, uint64_t *table)
{
  unsigned class_index;
  void *block = CONTEXT_CALL (
      table, NEXT (__memprof_hint_context_calloc) (n, size, table));
  count_context (block, n * size, class_index);
  return block;
}

void *
__memprof_hint_context_realloc (void *old, size_t size, uint64_t *table)
{
  unsigned class_index;
  void *block = CONTEXT_CALL (
      table, NEXT (__memprof_hint_context_realloc) (old, size, table));
  count_context (block, size, class_index);
  return block;
}

char *
__memprof_hint_context_strdup (const char *string, uint64_t *table)
{
  unsigned class_index;
  char *block = CONTEXT_CALL (
      table, NEXT (__memprof_hint_context_strdup) (string, table));
  count_context (block, block ? strlen (block) + 1 : 0, class_index);
  return block;
}

char *
__memprof_hint_context_strndup (const char *string, size_t limit,
                                uint64_t *table)
{
  unsigned class_index;
  char *block = CONTEXT_CALL (
      table, NEXT (__memprof_hint_context_strndup) (string, limit, table));
  count_context (block, block ? strlen (block) + 1 : 0, class_index);
  return block;
}

static void __attribute__ ((destructor)) report (void)
{
  const char *path = getenv ("HINT_COUNTER_OUTPUT");
  FILE *out = path ? fopen (path, "w") : NULL;
  if (out == NULL)
    return;
  fprintf (out,
           "cold_bytes %llu\nhot_bytes %llu\nhot_pages %llu\n"
           "context_default_bytes %llu\ncontext_cold_bytes %llu\n"
           "context_hot_bytes %llu\ncontext_hot_pages %llu\n",
           cold_bytes, hot_bytes, hot_pages.count, context_bytes[0],
           context_bytes[1], context_bytes[2], context_hot_pages.count);
  fclose (out);
}
