/* The analysis's profile model: merging MemInfoBlocks of different
   profiles (commutative and associative), contexts keyed by their
   locations, function GUIDs, and the .mprof file's round trip and its
   reader's checks.  */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mprof.h"
#include "profile.h"
#include "unit.h"

static uint64_t seed = 1;

static uint32_t
random_u32 (uint32_t limit)
{
  seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  return (uint32_t) ((seed >> 33) % limit);
}

/* A MIB of several allocations with random fields; timestamps and CPUs
   from small ranges so that ties happen.  */
static struct memprof_mib
random_mib (void)
{
  struct memprof_mib mib, one;
  mib_init_one (&mib, 1 + random_u32 (5000), random_u32 (100), random_u32 (4),
                4 + random_u32 (4), random_u32 (2), random_u32 (2));
  int more = (int) random_u32 (3);
  for (int i = 0; i < more; i++)
    {
      mib_init_one (&one, 1 + random_u32 (5000), random_u32 (100),
                    random_u32 (4), 4 + random_u32 (4), random_u32 (2),
                    random_u32 (2));
      mib_merge (&mib, &one);
    }
  return mib;
}

START_TEST (test_combine_commutes)
{
  for (int round = 0; round < 2000; round++)
    {
      struct memprof_mib a = random_mib (), b = random_mib ();
      struct memprof_mib ab = a, ba = b;
      profile_mib_combine (&ab, &b);
      profile_mib_combine (&ba, &a);
      ck_assert_int_eq (memcmp (&ab, &ba, sizeof ab), 0);
    }
}
END_TEST

START_TEST (test_combine_associates)
{
  for (int round = 0; round < 2000; round++)
    {
      struct memprof_mib a = random_mib (), b = random_mib (),
                         c = random_mib ();
      struct memprof_mib left = a, right = b;
      profile_mib_combine (&left, &b);
      profile_mib_combine (&left, &c);
      profile_mib_combine (&right, &c);
      struct memprof_mib outer = a;
      profile_mib_combine (&outer, &right);
      ck_assert_int_eq (memcmp (&left, &outer, sizeof left), 0);
    }
}
END_TEST

START_TEST (test_combine_adds_and_takes_extremes)
{
  struct memprof_mib a, b;
  mib_init_one (&a, 100, 7, 10, 20, 0, 1);
  mib_init_one (&b, 300, 2, 15, 18, 1, 1);
  profile_mib_combine (&a, &b);
  ck_assert_uint_eq (a.alloc_count, 2);
  ck_assert_uint_eq (a.total_size, 400);
  ck_assert_uint_eq (a.min_size, 100);
  ck_assert_uint_eq (a.max_size, 300);
  ck_assert_uint_eq (a.total_access_count, 9);
  ck_assert_uint_eq (a.min_access_count, 2);
  ck_assert_uint_eq (a.max_access_count, 7);
  ck_assert_uint_eq (a.total_lifetime, 13);
  /* The last allocation freed (at 20) gives the timestamps and CPUs.  */
  ck_assert_uint_eq (a.alloc_timestamp, 10);
  ck_assert_uint_eq (a.dealloc_timestamp, 20);
  ck_assert_uint_eq (a.alloc_cpu_id, 0);
}
END_TEST

START_TEST (test_guid_is_llvm_s)
{
  /* What llvm-profdata-19 prints for these names.  */
  ck_assert_uint_eq (profile_guid ("main"), 15822663052811949562ULL);
  ck_assert_uint_eq (profile_guid ("make_buf"), 11963818179784319867ULL);
  /* LLVM's canonical names: a trailing .llvm.N or .part.N goes, other
     suffixes stay.  */
  ck_assert_uint_eq (profile_guid ("main.llvm.42"), profile_guid ("main"));
  ck_assert_uint_eq (profile_guid ("main.part.0"), profile_guid ("main"));
  ck_assert_uint_eq (profile_guid ("main.part.0.llvm.7"),
                     profile_guid ("main"));
  ck_assert_uint_ne (profile_guid ("main.__uniq.5"), profile_guid ("main"));
  ck_assert_uint_ne (profile_guid ("main.llvm.4.cold"), profile_guid ("main"));
  ck_assert_uint_eq (profile_canonical_length ("f.llvm.1"), 1);
}
END_TEST

START_TEST (test_contexts_keyed_by_locations)
{
  struct profile profile;
  struct memprof_mib mib;
  profile_init (&profile);
  uint8_t id[20] = { 1, 2, 3 };
  uint32_t module = profile_add_module (&profile, id, 20);
  ck_assert_uint_eq (profile_add_module (&profile, id, 20), module);
  uint32_t stack1[3], stack2[3];
  for (int i = 0; i < 3; i++)
    {
      stack1[i] = profile_add_location (&profile, module, 0x1000 + i);
      stack2[i] = profile_add_location (&profile, module, 0x2000 + i);
    }
  ck_assert_uint_eq (profile_add_location (&profile, module, 0x1001),
                     stack1[1]);
  mib_init_one (&mib, 64, 3, 0, 1, 0, 0);
  profile_add_context (&profile, stack1, 3, &mib, NULL, NULL);
  profile_add_context (&profile, stack2, 3, &mib, NULL, NULL);
  profile_add_context (&profile, stack1, 3, &mib, NULL, NULL);
  profile_add_context (&profile, stack1, 2, &mib, NULL, NULL);
  ck_assert_uint_eq (profile.context_count, 3);
  ck_assert_uint_eq (profile.contexts[0].mib.alloc_count, 2);
  ck_assert_uint_eq (profile.contexts[0].mib.total_size, 128);
  profile_free (&profile);
}
END_TEST

/* Build a small profile with frames, a histogram and side-file data.  */
static void
sample_profile (struct profile *profile)
{
  struct memprof_mib mib;
  uint8_t id[20] = { 9, 8, 7 };
  profile_init (profile);
  uint32_t module = profile_add_module (profile, id, 20);
  profile->main_module = module;
  uint32_t locations[2] = { profile_add_location (profile, module, 0x1234),
                            profile_add_location (profile, module, 0x5678) };
  struct profile_frame frames[2]
      = { { profile_intern (profile, "_Z6helperv"),
            profile_intern (profile, "a.cc"), 12, 5, 10, PROFILE_FRAME_INLINED,
            profile_guid ("_Z6helperv") },
          { profile_intern (profile, "main"), profile_intern (profile, "a.cc"),
            30, 7, 20, 0, profile_guid ("main") } };
  profile_set_frames (profile, locations[0], frames, 2);
  mib_init_one (&mib, 40, 11, 1, 2, 0, 0);
  mib.access_histogram_size = 5;
  uint64_t histogram[5] = { 1, 0, 3, 0, 5 };
  struct profile_extra extra = { 1, 32, 0, 0 };
  profile_add_context (profile, locations, 2, &mib, histogram, &extra);
  profile->inputs = 1;
  profile->inputs_with_extra = 1;
  profile->histogram_granule = 8;
}

static char *
read_whole (const char *path, size_t *size)
{
  FILE *in = fopen (path, "rb");
  ck_assert_ptr_nonnull (in);
  fseek (in, 0, SEEK_END);
  *size = (size_t) ftell (in);
  fseek (in, 0, SEEK_SET);
  char *data = malloc (*size + 1);
  ck_assert_uint_eq (fread (data, 1, *size, in), *size);
  fclose (in);
  return data;
}

START_TEST (test_mprof_round_trip)
{
  struct profile first, second;
  char path[] = "/tmp/memprof-unit-XXXXXX", error[512];
  int fd = mkstemp (path);
  ck_assert_int_ge (fd, 0);
  close (fd);
  sample_profile (&first);
  ck_assert_int_eq (mprof_write (&first, path, error, sizeof error), 0);
  size_t size;
  char *data = read_whole (path, &size);
  profile_init (&second);
  ck_assert_msg (mprof_read (&second, (const uint8_t *) data, size, path, error,
                             sizeof error)
                     == 0,
                 "%s", error);
  ck_assert_uint_eq (second.context_count, 1);
  const struct profile_context *context = &second.contexts[0];
  ck_assert_uint_eq (context->mib.total_access_count, 11);
  ck_assert_uint_eq (context->mib.access_histogram_size, 5);
  ck_assert_uint_eq (context->histogram[4], 5);
  ck_assert_uint_eq (context->extra.touched_bytes, 32);
  ck_assert (context->has_extra);
  const struct profile_location *leaf
      = &second.locations[profile_context_locations (&second, context)[0]];
  ck_assert_uint_eq (leaf->address, 0x1234);
  ck_assert_uint_eq (leaf->frame_count, 2);
  const struct profile_frame *frame = &second.frames[leaf->first_frame];
  ck_assert_str_eq (profile_string (&second, frame->function), "_Z6helperv");
  ck_assert_uint_eq (frame->decl_line, 10);
  ck_assert_uint_eq (frame->flags, PROFILE_FRAME_INLINED);
  ck_assert_uint_eq (second.histogram_granule, 8);

  /* Written again, the same bytes.  */
  ck_assert_int_eq (mprof_write (&second, path, error, sizeof error), 0);
  size_t again_size;
  char *again = read_whole (path, &again_size);
  ck_assert_uint_eq (again_size, size);
  ck_assert_int_eq (memcmp (again, data, size), 0);

  /* Every truncation is refused with a message, never accepted.  */
  for (size_t cut = 0; cut < size; cut++)
    {
      struct profile truncated;
      profile_init (&truncated);
      error[0] = '\0';
      ck_assert_int_eq (mprof_read (&truncated, (const uint8_t *) data, cut,
                                    "cut.mprof", error, sizeof error),
                        -1);
      ck_assert_msg (strstr (error, "cut.mprof: at byte") != NULL, "%s", error);
      profile_free (&truncated);
    }
  free (again);
  free (data);
  unlink (path);
  profile_free (&first);
  profile_free (&second);
}
END_TEST

Suite *
profile_suite (void)
{
  Suite *suite = suite_create ("profile");
  TCase *tcase = tcase_create ("profile");
  tcase_add_test (tcase, test_combine_commutes);
  tcase_add_test (tcase, test_combine_associates);
  tcase_add_test (tcase, test_combine_adds_and_takes_extremes);
  tcase_add_test (tcase, test_guid_is_llvm_s);
  tcase_add_test (tcase, test_contexts_keyed_by_locations);
  tcase_add_test (tcase, test_mprof_round_trip);
  suite_add_tcase (suite, tcase);
  return suite;
}
