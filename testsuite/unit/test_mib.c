/* MemInfoBlock arithmetic (mib.c) against numbers worked out by hand with
   LLVM 19's rules (llvm/ProfileData/MemProfData.inc).  */

#include <stddef.h>
#include <string.h>

#include "mib.h"
#include "unit.h"

/* ---- Layout ---- */

START_TEST (test_layout_matches_llvm)
{
  /* Offsets from docs/profile-format.md (LLVM's packed MemInfoBlock).  */
  ck_assert_uint_eq (sizeof (struct memprof_mib), 144);
  ck_assert_uint_eq (offsetof (struct memprof_mib, alloc_count), 0);
  ck_assert_uint_eq (offsetof (struct memprof_mib, total_access_count), 4);
  ck_assert_uint_eq (offsetof (struct memprof_mib, total_size), 28);
  ck_assert_uint_eq (offsetof (struct memprof_mib, alloc_timestamp), 44);
  ck_assert_uint_eq (offsetof (struct memprof_mib, total_lifetime), 52);
  ck_assert_uint_eq (offsetof (struct memprof_mib, alloc_cpu_id), 68);
  ck_assert_uint_eq (offsetof (struct memprof_mib, num_same_dealloc_cpu), 88);
  ck_assert_uint_eq (offsetof (struct memprof_mib, data_type_id), 92);
  ck_assert_uint_eq (offsetof (struct memprof_mib, total_access_density), 100);
  ck_assert_uint_eq (
      offsetof (struct memprof_mib, total_lifetime_access_density), 116);
  ck_assert_uint_eq (offsetof (struct memprof_mib, access_histogram_size), 132);
  ck_assert_uint_eq (offsetof (struct memprof_mib, access_histogram), 136);
}
END_TEST

/* ---- One allocation ---- */

START_TEST (test_one_allocation)
{
  struct memprof_mib mib;

  memset (&mib, 0xa5, sizeof mib);
  mib_init_one (&mib, 128, 25616, 0, 0, 3, 3);
  ck_assert_uint_eq (mib.alloc_count, 1);
  ck_assert_uint_eq (mib.total_access_count, 25616);
  ck_assert_uint_eq (mib.min_access_count, 25616);
  ck_assert_uint_eq (mib.max_access_count, 25616);
  ck_assert_uint_eq (mib.total_size, 128);
  ck_assert_uint_eq (mib.min_size, 128);
  ck_assert_uint_eq (mib.max_size, 128);
  ck_assert_uint_eq (mib.total_lifetime, 0);
  ck_assert_uint_eq (mib.min_lifetime, 0);
  ck_assert_uint_eq (mib.max_lifetime, 0);
  /* 25616 * 100 / 128 = 20012 (20012.5 truncated).  */
  ck_assert_uint_eq (mib.total_access_density, 20012);
  ck_assert_uint_eq (mib.min_access_density, 20012);
  ck_assert_uint_eq (mib.max_access_density, 20012);
  /* Lifetime 0 counts as 1 ms: 20012 * 1000 / 1.  */
  ck_assert_uint_eq (mib.total_lifetime_access_density, 20012000);
  ck_assert_uint_eq (mib.min_lifetime_access_density, 20012000);
  ck_assert_uint_eq (mib.max_lifetime_access_density, 20012000);
  ck_assert_uint_eq (mib.alloc_cpu_id, 3);
  ck_assert_uint_eq (mib.dealloc_cpu_id, 3);
  ck_assert_uint_eq (mib.num_migrated_cpu, 0);
  ck_assert_uint_eq (mib.num_lifetime_overlaps, 0);
  ck_assert_uint_eq (mib.num_same_alloc_cpu, 0);
  ck_assert_uint_eq (mib.num_same_dealloc_cpu, 0);
  ck_assert_uint_eq (mib.data_type_id, 0);
  ck_assert_uint_eq (mib.access_histogram_size, 0);
  ck_assert_uint_eq (mib.access_histogram, 0);
}
END_TEST

START_TEST (test_lifetime_density)
{
  struct memprof_mib mib;

  /* 64 bytes, 64 accesses, 100..300 ms: density 100, lifetime 200,
     lifetime density 100 * 1000 / 200 = 500.  */
  mib_init_one (&mib, 64, 64, 100, 300, 0, 0);
  ck_assert_uint_eq (mib.alloc_timestamp, 100);
  ck_assert_uint_eq (mib.dealloc_timestamp, 300);
  ck_assert_uint_eq (mib.total_lifetime, 200);
  ck_assert_uint_eq (mib.total_access_density, 100);
  ck_assert_uint_eq (mib.total_lifetime_access_density, 500);
}
END_TEST

START_TEST (test_zero_size_counts_as_one)
{
  struct memprof_mib mib;

  /* Size 1, 5 accesses: density 500; lifetime 10: 500 * 1000 / 10.  */
  mib_init_one (&mib, 0, 5, 10, 20, 0, 0);
  ck_assert_uint_eq (mib.total_size, 1);
  ck_assert_uint_eq (mib.min_size, 1);
  ck_assert_uint_eq (mib.max_size, 1);
  ck_assert_uint_eq (mib.total_access_density, 500);
  ck_assert_uint_eq (mib.total_lifetime_access_density, 50000);
}
END_TEST

START_TEST (test_lifetime_wraps_in_u32)
{
  struct memprof_mib mib;

  /* 0x10 - 0xfffffff0 in u32 = 0x20 = 32 ms.  */
  mib_init_one (&mib, 8, 8, 0xfffffff0, 0x10, 0, 0);
  ck_assert_uint_eq (mib.total_lifetime, 32);
  ck_assert_uint_eq (mib.min_lifetime, 32);
  ck_assert_uint_eq (mib.max_lifetime, 32);
  /* density 8 * 100 / 8 = 100; 100 * 1000 / 32 = 3125.  */
  ck_assert_uint_eq (mib.total_lifetime_access_density, 3125);
}
END_TEST

START_TEST (test_size_truncated_to_u32)
{
  struct memprof_mib mib;

  /* 4 GiB + 10 as a u32 is 10; 100 accesses: density 1000.  */
  mib_init_one (&mib, (1ULL << 32) + 10, 100, 0, 0, 0, 0);
  ck_assert_uint_eq (mib.total_size, 10);
  ck_assert_uint_eq (mib.min_size, 10);
  ck_assert_uint_eq (mib.max_size, 10);
  ck_assert_uint_eq (mib.total_access_density, 1000);
  /* Exactly 4 GiB is 0 as a u32, which then counts as 1.  */
  mib_init_one (&mib, 1ULL << 32, 3, 0, 0, 0, 0);
  ck_assert_uint_eq (mib.total_size, 1);
  ck_assert_uint_eq (mib.total_access_density, 300);
}
END_TEST

START_TEST (test_densities_truncated_to_u32)
{
  struct memprof_mib mib;

  /* 2^32 + 1 accesses to 1 byte: density 100 * 2^32 + 100 in the u64
     total, 100 in the u32 min and max; times 1000 over 1 ms:
     100000 * 2^32 + 100000, 100000 as a u32.  */
  mib_init_one (&mib, 1, (1ULL << 32) + 1, 0, 0, 0, 0);
  ck_assert_uint_eq (mib.total_access_density, 100 * (1ULL << 32) + 100);
  ck_assert_uint_eq (mib.min_access_density, 100);
  ck_assert_uint_eq (mib.max_access_density, 100);
  ck_assert_uint_eq (mib.total_lifetime_access_density,
                     100000 * (1ULL << 32) + 100000);
  ck_assert_uint_eq (mib.min_lifetime_access_density, 100000);
  ck_assert_uint_eq (mib.max_lifetime_access_density, 100000);
}
END_TEST

START_TEST (test_migrated_cpu)
{
  struct memprof_mib mib;

  mib_init_one (&mib, 8, 0, 0, 0, 5, 5);
  ck_assert_uint_eq (mib.num_migrated_cpu, 0);
  mib_init_one (&mib, 8, 0, 0, 0, 5, 6);
  ck_assert_uint_eq (mib.num_migrated_cpu, 1);
  ck_assert_uint_eq (mib.alloc_cpu_id, 5);
  ck_assert_uint_eq (mib.dealloc_cpu_id, 6);
}
END_TEST

/* ---- Merging ---- */

/* Three allocations at one context, freed in this order:
     A: 64 bytes, 64 accesses, 100..300 ms, cpu 0 -> 0
        lifetime 200, density 100, lifetime density 500, migrated 0
     B: 256 bytes, 1000 accesses, 250..400 ms, cpu 0 -> 1
        lifetime 150, density 100000 / 256 = 390,
        lifetime density 390000 / 150 = 2600, migrated 1
     C: 32 bytes, 8 accesses, 500..510 ms, cpu 2 -> 1
        lifetime 10, density 25, lifetime density 2500, migrated 1
   with histograms of 8, 32 and 4 entries.  */
static struct memprof_mib
fold_three (void)
{
  struct memprof_mib a, b, c;

  mib_init_one (&a, 64, 64, 100, 300, 0, 0);
  a.access_histogram_size = 8;
  mib_init_one (&b, 256, 1000, 250, 400, 0, 1);
  b.access_histogram_size = 32;
  mib_init_one (&c, 32, 8, 500, 510, 2, 1);
  c.access_histogram_size = 4;
  mib_merge (&a, &b);
  mib_merge (&a, &c);
  return a;
}

START_TEST (test_merge_three_counts_and_sizes)
{
  struct memprof_mib mib = fold_three ();

  ck_assert_uint_eq (mib.alloc_count, 3);
  ck_assert_uint_eq (mib.total_access_count, 1072); /* 64 + 1000 + 8 */
  ck_assert_uint_eq (mib.min_access_count, 8);
  ck_assert_uint_eq (mib.max_access_count, 1000);
  ck_assert_uint_eq (mib.total_size, 352); /* 64 + 256 + 32 */
  ck_assert_uint_eq (mib.min_size, 32);
  ck_assert_uint_eq (mib.max_size, 256);
}
END_TEST

START_TEST (test_merge_three_lifetimes_and_densities)
{
  struct memprof_mib mib = fold_three ();

  ck_assert_uint_eq (mib.total_lifetime, 360); /* 200 + 150 + 10 */
  ck_assert_uint_eq (mib.min_lifetime, 10);
  ck_assert_uint_eq (mib.max_lifetime, 200);
  ck_assert_uint_eq (mib.total_access_density, 515); /* 100 + 390 + 25 */
  ck_assert_uint_eq (mib.min_access_density, 25);
  ck_assert_uint_eq (mib.max_access_density, 390);
  /* 500 + 2600 + 2500 */
  ck_assert_uint_eq (mib.total_lifetime_access_density, 5600);
  ck_assert_uint_eq (mib.min_lifetime_access_density, 500);
  ck_assert_uint_eq (mib.max_lifetime_access_density, 2600);
}
END_TEST

START_TEST (test_merge_three_timestamps_and_cpus)
{
  struct memprof_mib mib = fold_three ();

  /* B allocated at 250 < A freed at 300: 1; C at 500 >= B freed at 400.  */
  ck_assert_uint_eq (mib.num_lifetime_overlaps, 1);
  ck_assert_uint_eq (mib.alloc_timestamp, 500); /* C's */
  ck_assert_uint_eq (mib.dealloc_timestamp, 510);
  /* Alloc cpus 0, 0, 2: one repeat; dealloc cpus 0, 1, 1: one repeat.  */
  ck_assert_uint_eq (mib.num_same_alloc_cpu, 1);
  ck_assert_uint_eq (mib.num_same_dealloc_cpu, 1);
  ck_assert_uint_eq (mib.alloc_cpu_id, 2); /* C's */
  ck_assert_uint_eq (mib.dealloc_cpu_id, 1);
  /* A's value, although B and C migrated.  */
  ck_assert_uint_eq (mib.num_migrated_cpu, 0);
  ck_assert_uint_eq (mib.access_histogram_size, 32); /* max of 8, 32, 4 */
  ck_assert_uint_eq (mib.data_type_id, 0);
}
END_TEST

START_TEST (test_merge_keeps_first_migrated_value)
{
  struct memprof_mib into, from;

  mib_init_one (&into, 8, 1, 0, 6, 1, 2); /* migrated */
  mib_init_one (&from, 8, 1, 6, 9, 3, 3); /* not migrated */
  mib_merge (&into, &from);
  ck_assert_uint_eq (into.num_migrated_cpu, 1);
  /* Allocated at 6, when the other was freed: 6 < 6 is false.  */
  ck_assert_uint_eq (into.num_lifetime_overlaps, 0);
  ck_assert_uint_eq (into.num_same_alloc_cpu, 0);   /* 1 != 3 */
  ck_assert_uint_eq (into.num_same_dealloc_cpu, 0); /* 2 != 3 */
}
END_TEST

START_TEST (test_merge_histogram_size_is_max)
{
  struct memprof_mib into, from;

  mib_init_one (&into, 8, 1, 0, 0, 0, 0);
  mib_init_one (&from, 8, 1, 0, 0, 0, 0);
  into.access_histogram_size = 9;
  from.access_histogram_size = 4;
  mib_merge (&into, &from);
  ck_assert_uint_eq (into.access_histogram_size, 9);
  into.access_histogram_size = 4;
  from.access_histogram_size = 9;
  mib_merge (&into, &from);
  ck_assert_uint_eq (into.access_histogram_size, 9);
}
END_TEST

START_TEST (test_histogram_merge_elementwise)
{
  uint64_t into[5] = { 1, 2, 3, 4, 5 };
  const uint64_t from[3] = { 10, 20, 30 };

  mib_histogram_merge (into, from, 3);
  ck_assert_uint_eq (into[0], 11);
  ck_assert_uint_eq (into[1], 22);
  ck_assert_uint_eq (into[2], 33);
  ck_assert_uint_eq (into[3], 4); /* beyond FROM: unchanged */
  ck_assert_uint_eq (into[4], 5);
  mib_histogram_merge (into, from, 0);
  ck_assert_uint_eq (into[0], 11);
}
END_TEST

Suite *
mib_suite (void)
{
  Suite *suite = suite_create ("mib");
  TCase *one = tcase_create ("one allocation");
  TCase *merge = tcase_create ("merge");

  tcase_add_test (one, test_layout_matches_llvm);
  tcase_add_test (one, test_one_allocation);
  tcase_add_test (one, test_lifetime_density);
  tcase_add_test (one, test_zero_size_counts_as_one);
  tcase_add_test (one, test_lifetime_wraps_in_u32);
  tcase_add_test (one, test_size_truncated_to_u32);
  tcase_add_test (one, test_densities_truncated_to_u32);
  tcase_add_test (one, test_migrated_cpu);
  suite_add_tcase (suite, one);

  tcase_add_test (merge, test_merge_three_counts_and_sizes);
  tcase_add_test (merge, test_merge_three_lifetimes_and_densities);
  tcase_add_test (merge, test_merge_three_timestamps_and_cpus);
  tcase_add_test (merge, test_merge_keeps_first_migrated_value);
  tcase_add_test (merge, test_merge_histogram_size_is_max);
  tcase_add_test (merge, test_histogram_merge_elementwise);
  suite_add_tcase (suite, merge);
  return suite;
}
