/* The small-block slots (slab.c): threads' caches of free slots given
   back when a thread exits, empty spans' pages given back beyond the ones
   kept, and an empty span serving another class.  Slots are taken and
   freed through slab_allocate and slab_free themselves, as the allocator
   calls them.  */

#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"
#include "unit.h"

#define THREADS 4
#define BLOCKS_PER_THREAD 500

/* The class of a block of SIZE bytes, as slab.c chooses it.  */
static unsigned
class_for (size_t size)
{
  return (unsigned) ((size - 1) >> MEMPROF_GRANULE_SHIFT);
}

/* Slots of the class of SIZE in one span.  */
static size_t
slots_in_span_of (size_t size)
{
  return SLAB_SPAN_BYTES
         / (((size - 1) / MEMPROF_GRANULE_SIZE + 1) * MEMPROF_GRANULE_SIZE);
}

static uintptr_t *
pointer_array (size_t count)
{
  void *array = mmap (NULL, count * sizeof (uintptr_t), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ck_assert_msg (array != MAP_FAILED, "mmap of %zu pointers", count);
  return array;
}

/* COUNT blocks of SIZE bytes into BLOCKS, each a slot.  */
static void
allocate_slots (uintptr_t *blocks, size_t count, size_t size)
{
  for (size_t i = 0; i < count; i++)
    {
      void *block
          = slab_allocate (size, (uintptr_t) __builtin_return_address (0));
      ck_assert_msg (block != NULL && slab_owns (block),
                     "block %zu of %zu bytes is a slot", i, size);
      blocks[i] = (uintptr_t) block;
    }
}

static void
free_slots (const uintptr_t *blocks, size_t count)
{
  for (size_t i = 0; i < count; i++)
    slab_free (blocks[i]);
}

/* ROUNDS rounds of COUNT blocks of SIZE allocated, then all freed; how
   many times a span's pages were given back meanwhile.  */
static unsigned long
loop_giving_back (uintptr_t *blocks, size_t count, size_t size, int rounds)
{
  struct slab_usage before, after;
  slab_usage (&before);
  for (int round = 0; round < rounds; round++)
    {
      allocate_slots (blocks, count, size);
      free_slots (blocks, count);
    }
  slab_usage (&after);
  return (unsigned long) (after.spans_given_back_total
                          - before.spans_given_back_total);
}

static void *
allocate_and_free (void *size)
{
  uintptr_t blocks[BLOCKS_PER_THREAD];
  allocate_slots (blocks, BLOCKS_PER_THREAD, (size_t) size);
  free_slots (blocks, BLOCKS_PER_THREAD);
  return NULL;
}

START_TEST (test_exiting_threads_give_back_cached_slots)
{
  const size_t size = 200;
  struct slab_usage before, after;
  pthread_t threads[THREADS];

  slab_usage (&before);
  for (int i = 0; i < THREADS; i++)
    ck_assert (
        pthread_create (&threads[i], NULL, allocate_and_free, (void *) size)
        == 0);
  for (int i = 0; i < THREADS; i++)
    pthread_join (threads[i], NULL);
  slab_usage (&after);
  ck_assert_msg (after.cached_slots[class_for (size)]
                     == before.cached_slots[class_for (size)],
                 "slots of class %u in threads' caches: %lu before the "
                 "threads, %lu after they exited",
                 class_for (size),
                 (unsigned long) before.cached_slots[class_for (size)],
                 (unsigned long) after.cached_slots[class_for (size)]);
}
END_TEST

START_TEST (test_empty_spans_given_back)
{
  const size_t size = 500, spans = 40;
  size_t count = spans * slots_in_span_of (size);
  uintptr_t *blocks = pointer_array (count);
  struct slab_usage before, full, after;

  slab_usage (&before);
  allocate_slots (blocks, count, size);
  slab_usage (&full);
  free_slots (blocks, count);
  slab_usage (&after);
  ck_assert_msg (full.spans_in_use >= before.spans_in_use + spans,
                 "%zu spans' worth of blocks: %lu spans in use, %lu before",
                 spans, (unsigned long) full.spans_in_use,
                 (unsigned long) before.spans_in_use);
  /* All but the kept ones, and the one or two still holding slots in
     this thread's cache.  */
  ck_assert_msg (after.spans_given_back_total - before.spans_given_back_total
                     >= spans - SLAB_EMPTY_SPANS_KEPT - 2,
                 "after freeing %zu spans' worth of blocks, %lu spans given "
                 "back",
                 spans,
                 (unsigned long) (after.spans_given_back_total
                                  - before.spans_given_back_total));
  ck_assert_msg (after.spans_empty_kept <= SLAB_EMPTY_SPANS_KEPT,
                 "%lu empty spans kept committed, at most %d",
                 (unsigned long) after.spans_empty_kept, SLAB_EMPTY_SPANS_KEPT);
  munmap (blocks, count * sizeof (uintptr_t));
}
END_TEST

START_TEST (test_loop_keeps_its_spans)
{
  const size_t size = 500;
  size_t count = (SLAB_EMPTY_SPANS_KEPT / 2) * slots_in_span_of (size);
  uintptr_t *blocks = pointer_array (count);
  unsigned long given_back;

  /* The first round may find spans given back.  */
  loop_giving_back (blocks, count, size, 1);
  given_back = loop_giving_back (blocks, count, size, 10);
  ck_assert_msg (given_back == 0,
                 "10 rounds of %zu blocks allocated and freed gave back %lu "
                 "spans' pages",
                 count, given_back);
  munmap (blocks, count * sizeof (uintptr_t));
}
END_TEST

/* A loop larger than the spans kept at first: once the program has taken
   given-back spans again, the pool keeps as many as a round frees; a
   while after the loop, spans emptied find the pool back at its first
   size, and the pages beyond it go back.  */
START_TEST (test_pool_adapts_to_a_loop)
{
  const size_t size = 500;
  const size_t spans = 3 * SLAB_EMPTY_SPANS_KEPT;
  size_t count = spans * slots_in_span_of (size);
  uintptr_t *blocks = pointer_array (count);
  struct slab_usage after, later;
  unsigned long given_back;

  loop_giving_back (blocks, count, size, 3);
  given_back = loop_giving_back (blocks, count, size, 5);
  slab_usage (&after);
  ck_assert_msg (given_back == 0,
                 "rounds 4 to 8 of %zu spans' worth of blocks gave back %lu "
                 "spans' pages (%lu kept)",
                 spans, given_back, (unsigned long) after.spans_kept_now);
  ck_assert_msg (after.spans_empty_kept >= spans - 2,
                 "%lu empty spans kept after the loop of %zu",
                 (unsigned long) after.spans_empty_kept, spans);

  /* The test's own decay: SLAB_KEPT_DECAY_MS is seconds.  */
  slab_pool_decay_ms = 300;
  usleep ((slab_pool_decay_ms + 200) * 1000);
  /* Spans emptied again (more than the one holding this thread's
     cached slots).  */
  loop_giving_back (blocks, 4 * slots_in_span_of (size), size, 1);
  slab_usage (&later);
  ck_assert_msg (later.spans_kept_now == SLAB_EMPTY_SPANS_KEPT
                     && later.spans_empty_kept <= SLAB_EMPTY_SPANS_KEPT,
                 "%u ms after the loop: the pool keeps %lu spans (%lu "
                 "empty ones now), not %d",
                 slab_pool_decay_ms + 200, (unsigned long) later.spans_kept_now,
                 (unsigned long) later.spans_empty_kept, SLAB_EMPTY_SPANS_KEPT);
  munmap (blocks, count * sizeof (uintptr_t));
}
END_TEST

START_TEST (test_empty_span_serves_another_class)
{
  const size_t spans = 12;
  size_t small_count = spans * slots_in_span_of (250);
  size_t large_count = (spans / 2) * slots_in_span_of (500);
  uintptr_t *blocks = pointer_array (small_count);
  struct slab_usage freed, after;

  allocate_slots (blocks, small_count, 250);
  free_slots (blocks, small_count);
  slab_usage (&freed);
  ck_assert (freed.spans_empty_kept + freed.spans_empty_given_back
             >= spans / 2);
  allocate_slots (blocks, large_count, 500);
  slab_usage (&after);
  ck_assert_msg (
      after.spans_carved == freed.spans_carved,
      "%zu blocks of 500 bytes carved %lu new spans with %lu empty "
      "ones in the pool",
      large_count, (unsigned long) (after.spans_carved - freed.spans_carved),
      (unsigned long) (freed.spans_empty_kept + freed.spans_empty_given_back));
  free_slots (blocks, large_count);
  munmap (blocks, small_count * sizeof (uintptr_t));
}
END_TEST

Suite *
slab_suite (void)
{
  Suite *suite = suite_create ("slab");
  TCase *slots = tcase_create ("slots");

  tcase_set_timeout (slots, 60);
  tcase_add_test (slots, test_exiting_threads_give_back_cached_slots);
  tcase_add_test (slots, test_empty_spans_given_back);
  tcase_add_test (slots, test_loop_keeps_its_spans);
  tcase_add_test (slots, test_pool_adapts_to_a_loop);
  tcase_add_test (slots, test_empty_span_serves_another_class);
  suite_add_tcase (suite, slots);
  return suite;
}
