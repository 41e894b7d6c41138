/* The stack depot (depot.c).  The runtime interns the test program's own
   allocation stacks in the same depot, so the tests use made-up PCs
   (0xd0000000 and up: no code lives there) and compare context counts
   before and after rather than absolutely.  */

#include <pthread.h>
#include <string.h>

#include "internal.h"
#include "unit.h"

/* Marks the first PC of every made-up stack, per test.  */
#define FAKE_PC(test, n)                                                       \
  ((uintptr_t) 0xd0000000 + ((uintptr_t) (test) << 20) + (n))

static void
assert_usable_id (const struct depot_context *context)
{
  ck_assert_uint_ne (context->id, 0);
  ck_assert_uint_ne (context->id, UINT64_MAX);
  ck_assert_uint_ne (context->id, UINT64_MAX - 1);
  ck_assert_uint_ne (context->id, UINT64_MAX - 2); /* the overflow context */
}

START_TEST (test_same_stack_same_context)
{
  uintptr_t first[3] = { FAKE_PC (1, 0), 0x401000, 0x402000 };
  uintptr_t copy[3];
  struct depot_context *a, *b;

  memcpy (copy, first, sizeof copy);
  a = depot_intern (first, 3);
  b = depot_intern (copy, 3); /* equal contents, another array */
  ck_assert_ptr_nonnull (a);
  ck_assert_ptr_eq (a, b);
  ck_assert_uint_eq (a->id, b->id);
  assert_usable_id (a);
}
END_TEST

START_TEST (test_changed_pc_new_context)
{
  uintptr_t first[3] = { FAKE_PC (2, 0), 0x401000, 0x402000 };
  uintptr_t changed[3] = { FAKE_PC (2, 0), 0x401001, 0x402000 };
  struct depot_context *a = depot_intern (first, 3);
  struct depot_context *b = depot_intern (changed, 3);

  ck_assert_ptr_ne (a, b);
  ck_assert_uint_ne (a->id, b->id);
  assert_usable_id (a);
  assert_usable_id (b);
  /* Still the same contexts when asked again, in the other order.  */
  ck_assert_ptr_eq (depot_intern (changed, 3), b);
  ck_assert_ptr_eq (depot_intern (first, 3), a);
}
END_TEST

START_TEST (test_shorter_stack_new_context)
{
  uintptr_t pcs[3] = { FAKE_PC (3, 0), 0x401000, 0x402000 };
  struct depot_context *whole = depot_intern (pcs, 3);
  struct depot_context *prefix = depot_intern (pcs, 2);

  ck_assert_ptr_ne (whole, prefix);
  ck_assert_uint_ne (whole->id, prefix->id);
  ck_assert_uint_eq (whole->depth, 3);
  ck_assert_uint_eq (prefix->depth, 2);
}
END_TEST

START_TEST (test_context_stores_depth_and_pcs)
{
  uintptr_t pcs[5]
      = { FAKE_PC (4, 0), 0x7f0000001234, 0x401000, 0x400abc, 0x1 };
  struct depot_context *context = depot_intern (pcs, 5);

  ck_assert_uint_eq (context->depth, 5);
  ck_assert_uint_eq (context->pcs[0], FAKE_PC (4, 0));
  ck_assert_uint_eq (context->pcs[1], 0x7f0000001234);
  ck_assert_uint_eq (context->pcs[2], 0x401000);
  ck_assert_uint_eq (context->pcs[3], 0x400abc);
  ck_assert_uint_eq (context->pcs[4], 0x1);
  /* A new context has recorded nothing yet.  */
  ck_assert_uint_eq (context->mib.alloc_count, 0);
}
END_TEST

START_TEST (test_ids_distinct_and_usable)
{
  enum
  {
    COUNT = 200
  };
  static struct depot_context *contexts[COUNT];

  for (int i = 0; i < COUNT; i++)
    {
      uintptr_t pcs[2] = { FAKE_PC (5, i), 0x401000 };
      contexts[i] = depot_intern (pcs, 2);
    }
  for (int i = 0; i < COUNT; i++)
    {
      assert_usable_id (contexts[i]);
      ck_assert_uint_eq (contexts[i]->pcs[0], FAKE_PC (5, i));
      for (int j = 0; j < i; j++)
        ck_assert_uint_ne (contexts[i]->id, contexts[j]->id);
    }
}
END_TEST

START_TEST (test_count_grows_by_new_stacks_only)
{
  uint64_t before, middle, after;

  /* No assertion (which may allocate, hence intern) between the counts. */
  before = depot_context_count ();
  for (int i = 0; i < 10; i++)
    {
      uintptr_t pcs[3] = { FAKE_PC (6, i), 0x401000, 0x402000 };
      depot_intern (pcs, 3);
    }
  middle = depot_context_count ();
  for (int i = 0; i < 10; i++)
    {
      uintptr_t pcs[3] = { FAKE_PC (6, i), 0x401000, 0x402000 };
      depot_intern (pcs, 3);
    }
  after = depot_context_count ();
  ck_assert_uint_eq (middle - before, 10); /* 10 new stacks */
  ck_assert_uint_eq (after - middle, 0);   /* the same 10 again */
}
END_TEST

/* ---- Concurrency ---- */

#define THREADS 4
#define SHARED_STACKS 1000

static pthread_barrier_t start_line;
static struct depot_context *seen[THREADS][SHARED_STACKS];

static void
shared_stack (int n, uintptr_t pcs[2])
{
  pcs[0] = FAKE_PC (7, 0);
  pcs[1] = 0xe0000000 + n;
}

static void *
intern_shared_stacks (void *arg)
{
  int thread = (int) (intptr_t) arg;
  pthread_barrier_wait (&start_line);
  for (int n = 0; n < SHARED_STACKS; n++)
    {
      uintptr_t pcs[2];
      shared_stack (n, pcs);
      seen[thread][n] = depot_intern (pcs, 2);
    }
  return NULL;
}

static void
count_shared_contexts (struct depot_context *context, void *cookie)
{
  if (context->depth == 2 && context->pcs[0] == FAKE_PC (7, 0))
    ++*(int *) cookie;
}

START_TEST (test_concurrent_interning_no_duplicates)
{
  pthread_t threads[THREADS];
  uint64_t before, after;
  int in_table = 0;

  ck_assert_int_eq (pthread_barrier_init (&start_line, NULL, THREADS + 1), 0);
  for (int t = 0; t < THREADS; t++)
    ck_assert_int_eq (pthread_create (&threads[t], NULL, intern_shared_stacks,
                                      (void *) (intptr_t) t),
                      0);
  /* Every thread is created (and waiting): count, then let them go.  */
  before = depot_context_count ();
  pthread_barrier_wait (&start_line);
  for (int t = 0; t < THREADS; t++)
    pthread_join (threads[t], NULL);
  after = depot_context_count ();
  pthread_barrier_destroy (&start_line);

  ck_assert_uint_eq (after - before, SHARED_STACKS);
  for (int n = 0; n < SHARED_STACKS; n++)
    {
      uintptr_t pcs[2];
      shared_stack (n, pcs);
      for (int t = 0; t < THREADS; t++)
        ck_assert_msg (seen[t][n] == seen[0][n],
                       "stack %d: thread %d got another context", n, t);
      ck_assert_ptr_eq (depot_intern (pcs, 2), seen[0][n]);
      ck_assert_uint_eq (seen[0][n]->pcs[1], 0xe0000000 + n);
    }
  /* The table itself holds each stack once.  */
  depot_for_each (count_shared_contexts, &in_table);
  ck_assert_int_eq (in_table, SHARED_STACKS);
}
END_TEST

/* ---- Folding allocations into a context ---- */

/* The side-file counts of an allocation that adds none.  */
static const struct context_extra no_extra = { 0, 0 };

START_TEST (test_fold_two_mibs)
{
  uintptr_t pcs[1] = { FAKE_PC (8, 0) };
  struct depot_context *context = depot_intern (pcs, 1);
  struct memprof_mib first, second;

  /* 64 bytes, 64 accesses, 100..300 ms on cpu 0: density 100,
     lifetime density 100 * 1000 / 200 = 500.  */
  mib_init_one (&first, 64, 64, 100, 300, 0, 0);
  /* 256 bytes, 1000 accesses, 250..400 ms, cpu 0 -> 1: density
     100000 / 256 = 390, lifetime density 390000 / 150 = 2600.  */
  mib_init_one (&second, 256, 1000, 250, 400, 0, 1);
  depot_fold (context, &first, NULL, &no_extra);
  ck_assert_uint_eq (context->mib.alloc_count, 1);
  ck_assert_uint_eq (context->mib.total_size, 64);
  depot_fold (context, &second, NULL, &no_extra);
  ck_assert_uint_eq (context->mib.alloc_count, 2);
  ck_assert_uint_eq (context->mib.total_access_count, 1064);
  ck_assert_uint_eq (context->mib.min_access_count, 64);
  ck_assert_uint_eq (context->mib.max_access_count, 1000);
  ck_assert_uint_eq (context->mib.total_size, 320);
  ck_assert_uint_eq (context->mib.total_lifetime, 350);
  ck_assert_uint_eq (context->mib.total_access_density, 490);
  ck_assert_uint_eq (context->mib.total_lifetime_access_density, 3100);
  ck_assert_uint_eq (context->mib.num_lifetime_overlaps, 1); /* 250 < 300 */
  ck_assert_uint_eq (context->mib.alloc_timestamp, 250);
  ck_assert_uint_eq (context->mib.dealloc_timestamp, 400);
  ck_assert_uint_eq (context->mib.access_histogram_size, 0);
}
END_TEST

static struct memprof_mib
mib_with_histogram (uint32_t entries)
{
  struct memprof_mib mib;
  mib_init_one (&mib, 8 * entries, 1, 0, 1, 0, 0);
  mib.access_histogram_size = entries;
  return mib;
}

START_TEST (test_fold_histograms)
{
  uintptr_t pcs[1] = { FAKE_PC (9, 0) };
  struct depot_context *context = depot_intern (pcs, 1);
  const uint64_t small[3] = { 1, 2, 3 };
  const uint64_t large[5] = { 10, 20, 30, 40, 50 };
  const uint64_t tiny[2] = { 100, 100 };
  struct memprof_mib mib;

  mib = mib_with_histogram (3);
  depot_fold (context, &mib, small, &no_extra);
  ck_assert_uint_eq (context->mib.access_histogram_size, 3);
  mib = mib_with_histogram (5);
  depot_fold (context, &mib, large, &no_extra); /* the histogram grows */
  mib = mib_with_histogram (2);
  depot_fold (context, &mib, tiny, &no_extra);
  ck_assert_uint_eq (context->mib.alloc_count, 3);
  ck_assert_uint_eq (context->mib.access_histogram_size, 5);
  ck_assert_uint_ge (context->histogram_capacity, 5);
  ck_assert_uint_eq (context->histogram[0], 111); /* 1 + 10 + 100 */
  ck_assert_uint_eq (context->histogram[1], 122); /* 2 + 20 + 100 */
  ck_assert_uint_eq (context->histogram[2], 33);  /* 3 + 30 */
  ck_assert_uint_eq (context->histogram[3], 40);
  ck_assert_uint_eq (context->histogram[4], 50);
}
END_TEST

/* After depot_reset_records (memprof_reset), the first fold into a
   context whose histogram buffer is longer than the new histogram must
   not leave pre-reset values behind the new entries, where a later,
   longer histogram would be added on top of them.  */
START_TEST (test_fold_after_reset_forgets_old_histogram)
{
  uintptr_t pcs[1] = { FAKE_PC (10, 0) };
  struct depot_context *context = depot_intern (pcs, 1);
  const uint64_t ones[5] = { 1, 1, 1, 1, 1 };
  const uint64_t sevens[2] = { 7, 7 };
  const uint64_t tens[5] = { 10, 10, 10, 10, 10 };
  struct memprof_mib mib;

  mib = mib_with_histogram (5);
  depot_fold (context, &mib, ones, &no_extra);
  depot_reset_records ();
  ck_assert_uint_eq (context->mib.alloc_count, 0);
  mib = mib_with_histogram (2);
  depot_fold (context, &mib, sevens, &no_extra);
  ck_assert_uint_eq (context->mib.access_histogram_size, 2);
  mib = mib_with_histogram (5);
  depot_fold (context, &mib, tens, &no_extra);
  ck_assert_uint_eq (context->mib.alloc_count, 2);
  ck_assert_uint_eq (context->mib.access_histogram_size, 5);
  ck_assert_uint_eq (context->histogram[0], 17); /* 7 + 10 */
  ck_assert_uint_eq (context->histogram[1], 17); /* 7 + 10 */
  ck_assert_uint_eq (context->histogram[2], 10); /* 10, not 1 + 10 */
  ck_assert_uint_eq (context->histogram[3], 10);
  ck_assert_uint_eq (context->histogram[4], 10);
}
END_TEST

START_TEST (test_reset_forgets_records_keeps_contexts)
{
  uintptr_t pcs[2] = { FAKE_PC (11, 0), 0x401000 };
  struct depot_context *context = depot_intern (pcs, 2);
  uint64_t id = context->id;
  struct memprof_mib mib;

  mib_init_one (&mib, 100, 5, 0, 10, 0, 0);
  depot_fold (context, &mib, NULL, &no_extra);
  depot_fold (context, &mib, NULL, &no_extra);
  ck_assert_uint_eq (context->mib.alloc_count, 2);
  depot_reset_records ();
  ck_assert_uint_eq (context->mib.alloc_count, 0);
  ck_assert_uint_eq (context->mib.total_size, 0);
  ck_assert_ptr_eq (depot_intern (pcs, 2), context);
  ck_assert_uint_eq (context->id, id);
  depot_fold (context, &mib, NULL, &no_extra);
  ck_assert_uint_eq (context->mib.alloc_count, 1);
  ck_assert_uint_eq (context->mib.total_size, 100);
}
END_TEST

/* ---- The side file's counts (context_extra_init_one, depot_fold) ---- */

static const struct
{
  uint64_t size, accesses, touched_counters;
  uint32_t granule_size, weight;
  uint64_t untouched_allocations, touched_bytes; /* worked out by hand */
} extra_cases[] = {
  { 65536, 1024, 16, 64, 1, 0, 1024 }, /* 1 KiB of 64 KiB touched */
  { 3000, 0, 0, 64, 1, 1, 0 },         /* never touched */
  { 10, 1, 1, 64, 1, 0, 10 },          /* one granule, capped at 10 */
  { 1000, 1000, 16, 64, 1, 0, 1000 },  /* 16 x 64 = 1024, capped */
  { 200, 130, 3, 64, 1, 0, 192 },      /* 3 x 64 <= 200 */
  { 10, 1, 1, 8, 1, 0, 8 },            /* histogram granules */
  { 200, 130, 17, 8, 1, 0, 136 },      /* 17 x 8 */
  { 0, 0, 0, 64, 1, 1, 0 },            /* malloc (0) */
  { 64, 5, 1, 64, 1000, 0, 64000 },    /* weighted: 1000 allocations */
  { 64, 0, 0, 64, 1000, 1000, 0 },     /* 1000 untouched */
  { 64, 0, 0, 64, 0, 1, 0 },           /* weight 0 counts 1, as mib_scale */
  /* The product is taken in 64 bits: 2^30 x (2^32 - 1).  */
  { 1UL << 30, 1, 1UL << 24, 64, UINT32_MAX, 0,
    (1UL << 30) * (uint64_t) UINT32_MAX },
};

START_TEST (test_context_extra_of_one_allocation)
{
  struct context_extra extra;
  context_extra_init_one (&extra, extra_cases[_i].size,
                          extra_cases[_i].accesses,
                          extra_cases[_i].touched_counters,
                          extra_cases[_i].granule_size, extra_cases[_i].weight);
  ck_assert_uint_eq (extra.untouched_allocations,
                     extra_cases[_i].untouched_allocations);
  ck_assert_uint_eq (extra.touched_bytes, extra_cases[_i].touched_bytes);
}
END_TEST

START_TEST (test_fold_adds_side_file_counts)
{
  uintptr_t pcs[1] = { FAKE_PC (12, 0) };
  struct depot_context *context = depot_intern (pcs, 1);
  struct context_extra touched, untouched;
  struct memprof_mib mib;

  /* 100 bytes touched in 2 granules; 100 bytes never touched, x3.  */
  context_extra_init_one (&touched, 100, 7, 2, 64, 1);
  context_extra_init_one (&untouched, 100, 0, 0, 64, 3);
  mib_init_one (&mib, 100, 7, 0, 1, 0, 0);
  depot_fold (context, &mib, NULL, &touched);
  mib_init_one (&mib, 100, 0, 0, 1, 0, 0);
  mib_scale (&mib, 3);
  depot_fold (context, &mib, NULL, &untouched);
  depot_fold (context, &mib, NULL, &untouched);
  ck_assert_uint_eq (context->mib.alloc_count, 7);
  ck_assert_uint_eq (context->extra.untouched_allocations, 6);
  ck_assert_uint_eq (context->extra.touched_bytes, 100); /* min (128, 100) */
}
END_TEST

/* One freed block for depot_fold_block and, as the reference, the MIB
   and side-file counts mib_init_one, mib_scale and
   context_extra_init_one make of it.  */
struct freed_block
{
  uint64_t size, accesses, touched_counters;
  uint32_t alloc_timestamp, now, alloc_cpu, dealloc_cpu, weight;
};

static void
fold_both (struct depot_context *by_block, struct depot_context *by_mib,
           const struct freed_block *freed)
{
  struct live_block block
      = { 0x10000,          freed->size,  by_block, freed->alloc_timestamp,
          freed->alloc_cpu, freed->weight };
  struct memprof_mib mib;
  struct context_extra extra;

  depot_fold_block (&block, freed->accesses, freed->touched_counters,
                    freed->now, freed->dealloc_cpu);
  mib_init_one (&mib, freed->size, freed->accesses, freed->alloc_timestamp,
                freed->now, freed->alloc_cpu, freed->dealloc_cpu);
  mib_scale (&mib, freed->weight);
  context_extra_init_one (&extra, freed->size, freed->accesses,
                          freed->touched_counters, MEMPROF_GRANULE_SIZE,
                          freed->weight);
  depot_fold (by_mib, &mib, NULL, &extra);
}

static void
assert_same_records (const struct depot_context *by_block,
                     const struct depot_context *by_mib, int step)
{
  ck_assert_msg (memcmp (&by_block->mib, &by_mib->mib, sizeof by_mib->mib) == 0,
                 "after block %d: depot_fold_block's MIB differs from "
                 "mib_merge's (alloc_count %u and %u, min size %u and %u, "
                 "max accesses %lu and %lu)",
                 step, by_block->mib.alloc_count, by_mib->mib.alloc_count,
                 by_block->mib.min_size, by_mib->mib.min_size,
                 (unsigned long) by_block->mib.max_access_count,
                 (unsigned long) by_mib->mib.max_access_count);
  ck_assert_uint_eq (by_block->extra.untouched_allocations,
                     by_mib->extra.untouched_allocations);
  ck_assert_uint_eq (by_block->extra.touched_bytes,
                     by_mib->extra.touched_bytes);
}

/* depot_fold_block's short way (a block with the values of the last one
   folded the long way) gives the MIB the long way gives: blocks repeated,
   repeated after others, weighted, with and without accesses.  */
START_TEST (test_fold_block_equals_merge)
{
  uintptr_t by_block_pcs[1] = { FAKE_PC (14, 0) };
  uintptr_t by_mib_pcs[1] = { FAKE_PC (14, 1) };
  struct depot_context *by_block = depot_intern (by_block_pcs, 1);
  struct depot_context *by_mib = depot_intern (by_mib_pcs, 1);
  static const struct freed_block blocks[] = {
    { 16, 5, 1, 10, 12, 0, 0, 1 },      { 16, 5, 1, 20, 22, 1, 0, 1 },
    { 16, 5, 1, 30, 32, 1, 1, 1 },      { 16, 5, 1, 31, 33, 0, 1, 3 },
    { 16, 9, 1, 40, 42, 0, 0, 1 },      { 16, 5, 1, 41, 43, 0, 0, 1 },
    { 16, 5, 1, 50, 51, 0, 0, 1 },      { 16, 5, 1, 60, 61, 0, 0, 1 },
    { 400, 0, 0, 70, 90, 0, 0, 1 },     { 400, 0, 0, 91, 111, 0, 0, 1 },
    { 1, 0, 0, 120, 120, 0, 0, 2 },     { 400, 700, 7, 130, 150, 0, 0, 1 },
    { 400, 700, 7, 151, 171, 0, 0, 1 }, { 0, 0, 0, 180, 181, 0, 0, 1 },
    { 0, 0, 0, 182, 183, 0, 0, 1 },     { 16, 5, 1, 190, 192, 0, 0, 1 },
  };

  for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++)
    {
      fold_both (by_block, by_mib, &blocks[i]);
      assert_same_records (by_block, by_mib, (int) i);
    }
}
END_TEST

/* After a reset the short way starts again: the last block folded
   before it says nothing of the MIB folded after it.  */
START_TEST (test_fold_block_after_reset)
{
  uintptr_t by_block_pcs[1] = { FAKE_PC (15, 0) };
  uintptr_t by_mib_pcs[1] = { FAKE_PC (15, 1) };
  struct depot_context *by_block = depot_intern (by_block_pcs, 1);
  struct depot_context *by_mib = depot_intern (by_mib_pcs, 1);
  static const struct freed_block small = { 16, 5, 1, 10, 12, 0, 0, 1 };
  struct memprof_mib large;
  struct context_extra no_counts = { 0, 0 };

  fold_both (by_block, by_mib, &small);
  depot_reset_records ();
  /* A block folded whole (as in histogram mode) into both.  */
  mib_init_one (&large, 300, 90, 20, 30, 0, 0);
  depot_fold (by_block, &large, NULL, &no_counts);
  depot_fold (by_mib, &large, NULL, &no_counts);
  fold_both (by_block, by_mib, &small);
  assert_same_records (by_block, by_mib, 1);
  ck_assert_uint_eq (by_block->mib.min_size, 16);
  ck_assert_uint_eq (by_block->mib.max_size, 300);
}
END_TEST

/* The long way's shortcut for a block with no access after a last fold
   with none: sizes and lifetimes that vary (a loop's sizes, a context's
   lifetimes) give the MIB mib_merge gives, weighted or not, and blocks
   with accesses between them still move the Min and Max fields.  */
START_TEST (test_fold_block_untouched_sizes_vary)
{
  uintptr_t by_block_pcs[1] = { FAKE_PC (16, 0) };
  uintptr_t by_mib_pcs[1] = { FAKE_PC (16, 1) };
  struct depot_context *by_block = depot_intern (by_block_pcs, 1);
  struct depot_context *by_mib = depot_intern (by_mib_pcs, 1);
  static const struct freed_block blocks[] = {
    { 48, 0, 0, 10, 12, 0, 0, 1 },   { 16, 0, 0, 12, 12, 0, 1, 1 },
    { 4096, 0, 0, 12, 19, 1, 1, 1 }, { 100, 0, 0, 13, 14, 1, 0, 5 },
    { 8, 0, 0, 20, 20, 0, 0, 1 },    { 16, 3, 1, 21, 40, 0, 0, 1 },
    { 5000, 0, 0, 41, 41, 0, 0, 1 }, { 2, 0, 0, 41, 90, 0, 0, 2 },
    { 0, 0, 0, 91, 91, 1, 1, 1 },    { 64, 0, 0, 92, 93, 1, 0, 1 },
  };

  for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++)
    {
      fold_both (by_block, by_mib, &blocks[i]);
      assert_same_records (by_block, by_mib, (int) i);
    }
  ck_assert_uint_eq (by_block->mib.min_size, 1);
  ck_assert_uint_eq (by_block->mib.max_size, 5000);
  ck_assert_uint_eq (by_block->mib.max_lifetime, 49);
}
END_TEST

/* After a reset the last fold says nothing of the accesses of a MIB
   folded whole: a block with no access after it takes the long way and
   brings the minimum access count down to 0.  */
START_TEST (test_fold_block_untouched_after_reset)
{
  uintptr_t by_block_pcs[1] = { FAKE_PC (17, 0) };
  uintptr_t by_mib_pcs[1] = { FAKE_PC (17, 1) };
  struct depot_context *by_block = depot_intern (by_block_pcs, 1);
  struct depot_context *by_mib = depot_intern (by_mib_pcs, 1);
  static const struct freed_block untouched = { 16, 0, 0, 10, 12, 0, 0, 1 };
  static const struct freed_block larger = { 32, 0, 0, 40, 41, 0, 0, 1 };
  struct memprof_mib counted;
  struct context_extra no_counts = { 0, 0 };

  fold_both (by_block, by_mib, &untouched);
  depot_reset_records ();
  mib_init_one (&counted, 300, 90, 20, 30, 0, 0);
  depot_fold (by_block, &counted, NULL, &no_counts);
  depot_fold (by_mib, &counted, NULL, &no_counts);
  fold_both (by_block, by_mib, &larger);
  assert_same_records (by_block, by_mib, 1);
  ck_assert_uint_eq (by_block->mib.min_access_count, 0);
}
END_TEST

START_TEST (test_reset_forgets_side_file_counts)
{
  uintptr_t pcs[1] = { FAKE_PC (13, 0) };
  struct depot_context *context = depot_intern (pcs, 1);
  struct context_extra extra;
  struct memprof_mib mib;

  mib_init_one (&mib, 64, 0, 0, 1, 0, 0);
  context_extra_init_one (&extra, 64, 0, 0, 64, 1);
  depot_fold (context, &mib, NULL, &extra);
  ck_assert_uint_eq (context->extra.untouched_allocations, 1);
  depot_reset_records ();
  ck_assert_uint_eq (context->extra.untouched_allocations, 0);
  ck_assert_uint_eq (context->extra.touched_bytes, 0);
  mib_init_one (&mib, 64, 3, 0, 1, 0, 0);
  context_extra_init_one (&extra, 64, 3, 1, 64, 1);
  depot_fold (context, &mib, NULL, &extra);
  ck_assert_uint_eq (context->extra.untouched_allocations, 0);
  ck_assert_uint_eq (context->extra.touched_bytes, 64);
}
END_TEST

Suite *
depot_suite (void)
{
  Suite *suite = suite_create ("depot");
  TCase *interning = tcase_create ("interning");
  TCase *threads = tcase_create ("threads");
  TCase *folding = tcase_create ("folding");

  tcase_add_test (interning, test_same_stack_same_context);
  tcase_add_test (interning, test_changed_pc_new_context);
  tcase_add_test (interning, test_shorter_stack_new_context);
  tcase_add_test (interning, test_context_stores_depth_and_pcs);
  tcase_add_test (interning, test_ids_distinct_and_usable);
  tcase_add_test (interning, test_count_grows_by_new_stacks_only);
  suite_add_tcase (suite, interning);

  tcase_set_timeout (threads, 20);
  tcase_add_test (threads, test_concurrent_interning_no_duplicates);
  suite_add_tcase (suite, threads);

  tcase_add_test (folding, test_fold_two_mibs);
  tcase_add_test (folding, test_fold_histograms);
  tcase_add_test (folding, test_fold_after_reset_forgets_old_histogram);
  tcase_add_test (folding, test_reset_forgets_records_keeps_contexts);
  tcase_add_loop_test (folding, test_context_extra_of_one_allocation, 0,
                       sizeof extra_cases / sizeof extra_cases[0]);
  tcase_add_test (folding, test_fold_adds_side_file_counts);
  tcase_add_test (folding, test_reset_forgets_side_file_counts);
  tcase_add_test (folding, test_fold_block_equals_merge);
  tcase_add_test (folding, test_fold_block_after_reset);
  tcase_add_test (folding, test_fold_block_untouched_sizes_vary);
  tcase_add_test (folding, test_fold_block_untouched_after_reset);
  suite_add_tcase (suite, folding);
  return suite;
}
