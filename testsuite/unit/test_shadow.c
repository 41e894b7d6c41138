/* The shadow mapping of memprof/abi.h and the runtime's counting entry
   points, on real memory from the runtime's malloc.  */

#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "unit.h"

/* An arbitrary shadow base for the pure arithmetic.  */
#define BASE ((uintptr_t) 0x100000000000)

/* ---- Arithmetic ---- */

static const struct
{
  uintptr_t addr;
  uintptr_t offset; /* from the base, worked out by hand */
} counter_cases[] = {
  { 0, 0 },          /* granule 0 */
  { 63, 0 },         /* last byte of granule 0 */
  { 64, 8 },         /* granule 1: (64 & ~63) >> 3 */
  { 127, 8 },        /* last byte of granule 1 */
  { 128, 16 },       /* granule 2 */
  { 0x1000, 0x200 }, /* 0x1000 >> 3 */
  { 0x1039, 0x200 }, /* 0x1039 & ~63 = 0x1000 */
  { 0x1040, 0x208 }, /* 0x1040 >> 3 */
  /* 0x7fff12345678 & ~63 = 0x7fff12345640; >> 3 = 0xfffe2468ac8.  */
  { 0x7fff12345678, 0xfffe2468ac8 },
};

START_TEST (test_shadow_for_hand_computed)
{
  uintptr_t got = (uintptr_t) memprof_shadow_for (BASE, counter_cases[_i].addr);
  ck_assert_msg (got == BASE + counter_cases[_i].offset,
                 "shadow_for (0x%lx) = base + 0x%lx, expected base + 0x%lx",
                 (unsigned long) counter_cases[_i].addr,
                 (unsigned long) (got - BASE),
                 (unsigned long) counter_cases[_i].offset);
}
END_TEST

START_TEST (test_shadow_for_other_base)
{
  /* A base that is not a multiple of 8 is simply added.  */
  ck_assert_uint_eq ((uintptr_t) memprof_shadow_for (0x12341, 0x1000),
                     0x12541); /* 0x12341 + 0x200 */
  ck_assert_uint_eq ((uintptr_t) memprof_shadow_for (0, 0x7fff12345678),
                     0xfffe2468ac8);
}
END_TEST

static const struct
{
  uintptr_t addr;
  uintptr_t offset;
} histogram_cases[] = {
  { 0, 0 },
  { 7, 0 }, /* 8-byte granule 0 */
  { 8, 1 },
  { 15, 1 },         /* granule 1 */
  { 63, 7 },         /* 63 >> 3 */
  { 64, 8 },         /* 64 >> 3 */
  { 0x1039, 0x207 }, /* 0x1039 >> 3 */
  /* 0x7fff12345678 >> 3 = 0xfffe2468acf.  */
  { 0x7fff12345678, 0xfffe2468acf },
};

START_TEST (test_histogram_shadow_for_hand_computed)
{
  uintptr_t got = (uintptr_t) memprof_histogram_shadow_for (
      BASE, histogram_cases[_i].addr);
  ck_assert_msg (got == BASE + histogram_cases[_i].offset,
                 "histogram_shadow_for (0x%lx) = base + 0x%lx, expected base "
                 "+ 0x%lx",
                 (unsigned long) histogram_cases[_i].addr,
                 (unsigned long) (got - BASE),
                 (unsigned long) histogram_cases[_i].offset);
}
END_TEST

START_TEST (test_granule_bytes_share_one_counter)
{
  /* Bytes 0x1000..0x103f share the counter at base + 0x200; the next
     granule's bytes all use the next 8 bytes.  */
  for (uintptr_t i = 0; i < 64; i++)
    {
      ck_assert_uint_eq ((uintptr_t) memprof_shadow_for (BASE, 0x1000 + i),
                         BASE + 0x200);
      ck_assert_uint_eq ((uintptr_t) memprof_shadow_for (BASE, 0x1000 + 64 + i),
                         BASE + 0x208);
    }
}
END_TEST

/* ---- Counting into the real shadow ---- */

/* A 64-aligned block of 3 granules from the runtime's malloc; the test
   touches the first 2, the third must stay untouched.  */
static unsigned char *block;

static uint64_t *
granule_counter (const void *address)
{
  return memprof_shadow_for (__memprof_shadow_base, (uintptr_t) address);
}

static void
zero_block_counters (void)
{
  for (int g = 0; g < 3; g++)
    *granule_counter (block + 64 * g) = 0;
}

static void
setup_block (void)
{
  ck_assert_msg (__memprof_shadow_base != 0, "the shadow is not reserved");
  ck_assert_msg (!runtime_histogram, "the runtime is in histogram mode");
  block = malloc (3 * 64);
  ck_assert_ptr_nonnull (block);
  ck_assert_uint_eq ((uintptr_t) block % 64, 0);
  zero_block_counters ();
}

static void
teardown_block (void)
{
  zero_block_counters ();
  free (block);
  block = NULL;
}

static void
assert_counters (uint64_t granule0, uint64_t granule1)
{
  ck_assert_uint_eq (*granule_counter (block), granule0);
  ck_assert_uint_eq (*granule_counter (block + 64), granule1);
  ck_assert_uint_eq (*granule_counter (block + 128), 0);
  /* The counters are consecutive u64s.  */
  ck_assert_ptr_eq (granule_counter (block + 64), granule_counter (block) + 1);
}

START_TEST (test_range_two_whole_granules)
{
  /* 128 bytes: steps at +0..+56 (8 in granule 0), +64..+120 (8 in 1).  */
  __memprof_range_access (block, 128);
  assert_counters (8, 8);
}
END_TEST

START_TEST (test_range_one_step_across_boundary)
{
  /* [+60, +68): one step at +60, in granule 0.  */
  __memprof_range_access (block + 60, 8);
  assert_counters (1, 0);
}
END_TEST

START_TEST (test_range_two_steps_across_boundary)
{
  /* [+60, +76): steps at +60 (granule 0) and +68 (granule 1).  */
  __memprof_range_access (block + 60, 16);
  assert_counters (1, 1);
}
END_TEST

START_TEST (test_range_one_byte)
{
  __memprof_range_access (block, 1); /* one step at +0 */
  assert_counters (1, 0);
}
END_TEST

START_TEST (test_range_empty)
{
  __memprof_range_access (block, 0); /* no step */
  assert_counters (0, 0);
}
END_TEST

START_TEST (test_range_unaligned_start)
{
  /* [+8, +128): steps +8..+56 (7 in granule 0), +64..+120 (8 in 1).  */
  __memprof_range_access (block + 8, 120);
  assert_counters (7, 8);
}
END_TEST

START_TEST (test_range_accumulates)
{
  __memprof_range_access (block, 128);     /* 8, 8 */
  __memprof_range_access (block + 60, 16); /* 1, 1 */
  __memprof_range_access (block + 64, 9);  /* steps +64, +72: 0, 2 */
  assert_counters (9, 11);
}
END_TEST

START_TEST (test_load_and_store_count_one)
{
  __memprof_load (block + 63);  /* granule 0 */
  __memprof_store (block + 64); /* granule 1 */
  __memprof_store (block);      /* granule 0 */
  assert_counters (2, 1);
}
END_TEST

START_TEST (test_collect_sums_and_clears)
{
  uint64_t touched;
  __memprof_range_access (block, 128); /* 8 + 8 */
  __memprof_load (block + 130);        /* granule 2, not collected */
  ck_assert_uint_eq (
      shadow_collect ((uintptr_t) block, 2, true, &touched, NULL, 0), 16);
  ck_assert_uint_eq (touched, 2);
  ck_assert_uint_eq (*granule_counter (block), 0);
  ck_assert_uint_eq (*granule_counter (block + 64), 0);
  ck_assert_uint_eq (*granule_counter (block + 128), 1);
}
END_TEST

START_TEST (test_collect_counts_touched_granules)
{
  uint64_t touched = 99;
  ck_assert_uint_eq (
      shadow_collect ((uintptr_t) block, 3, false, &touched, NULL, 0), 0);
  ck_assert_uint_eq (touched, 0); /* never touched */
  __memprof_store (block + 5);    /* granule 0 */
  __memprof_load (block + 129);   /* granule 2, twice */
  __memprof_load (block + 190);
  ck_assert_uint_eq (
      shadow_collect ((uintptr_t) block, 3, false, &touched, NULL, 0), 3);
  ck_assert_uint_eq (touched, 2); /* granules 0 and 2, not 1 */
  /* Not cleared: the same again.  */
  ck_assert_uint_eq (
      shadow_collect ((uintptr_t) block, 3, false, &touched, NULL, 0), 3);
  ck_assert_uint_eq (touched, 2);
}
END_TEST

/* In histogram mode a counter is one byte per 8 bytes: touched counters
   count 8-byte words.  The mode is switched for this test only; the
   block's shadow bytes are the same memory in both modes.  */
START_TEST (test_collect_counts_touched_words_in_histogram_mode)
{
  uint64_t touched, histogram[24];

  runtime_histogram = true;
  __memprof_histogram_store (block);       /* word 0 */
  __memprof_histogram_load (block + 7);    /* word 0 again */
  __memprof_histogram_load (block + 8);    /* word 1 */
  __memprof_histogram_store (block + 64);  /* word 8 */
  __memprof_histogram_store (block + 191); /* word 23 */
  uint64_t total
      = shadow_collect ((uintptr_t) block, 3, true, &touched, histogram, 24);
  runtime_histogram = false;
  ck_assert_uint_eq (total, 5);
  ck_assert_uint_eq (touched, 4);
  ck_assert_uint_eq (histogram[0], 2);
  ck_assert_uint_eq (histogram[1], 1);
  ck_assert_uint_eq (histogram[8], 1);
  ck_assert_uint_eq (histogram[23], 1);
  assert_counters (0, 0); /* cleared */
}
END_TEST

Suite *
shadow_suite (void)
{
  Suite *suite = suite_create ("shadow");
  TCase *mapping = tcase_create ("mapping");
  TCase *counting = tcase_create ("counting");

  tcase_add_loop_test (mapping, test_shadow_for_hand_computed, 0,
                       sizeof counter_cases / sizeof counter_cases[0]);
  tcase_add_test (mapping, test_shadow_for_other_base);
  tcase_add_loop_test (mapping, test_histogram_shadow_for_hand_computed, 0,
                       sizeof histogram_cases / sizeof histogram_cases[0]);
  tcase_add_test (mapping, test_granule_bytes_share_one_counter);
  suite_add_tcase (suite, mapping);

  tcase_add_checked_fixture (counting, setup_block, teardown_block);
  tcase_add_test (counting, test_range_two_whole_granules);
  tcase_add_test (counting, test_range_one_step_across_boundary);
  tcase_add_test (counting, test_range_two_steps_across_boundary);
  tcase_add_test (counting, test_range_one_byte);
  tcase_add_test (counting, test_range_empty);
  tcase_add_test (counting, test_range_unaligned_start);
  tcase_add_test (counting, test_range_accumulates);
  tcase_add_test (counting, test_load_and_store_count_one);
  tcase_add_test (counting, test_collect_sums_and_clears);
  tcase_add_test (counting, test_collect_counts_touched_granules);
  tcase_add_test (counting,
                  test_collect_counts_touched_words_in_histogram_mode);
  suite_add_tcase (suite, counting);
  return suite;
}
