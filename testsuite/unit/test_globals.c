/* Global variables in the analysis: the rule that attributes the
   accesses of 64-byte granules to the globals in them (formats/globals.h),
   side files of version 1 and 2 loaded next to their profile, and the
   .mprof file's GLOBALS section: its round trip and its order-free
   bytes.  */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "extraformat.h"
#include "globals.h"
#include "mprof.h"
#include "profile.h"
#include "rawwriter.h"
#include "unit.h"

static uint32_t
add_global (struct profile *profile, uint32_t module, const char *name,
            uint64_t address, uint64_t size)
{
  struct profile_global global
      = { module, profile_intern (profile, name), 0, 0, address, size };
  return profile_add_global (profile, &global);
}

/* A profile with one module and the main module set.  */
static uint32_t
start_profile (struct profile *profile)
{
  static const uint8_t id[20] = { 1, 2, 3, 4 };
  profile_init (profile);
  uint32_t module = profile_add_module (profile, id, 20);
  profile->main_module = module;
  profile->global_inputs = 1;
  return module;
}

/* ---- The rule ---- */

START_TEST (test_global_alone_gets_its_granules)
{
  struct profile profile;
  uint32_t module = start_profile (&profile);
  uint32_t array = add_global (&profile, module, "array", 0x1000, 256);
  profile_add_granule (&profile, module, 0x1000, 7);
  profile_add_granule (&profile, module, 0x10c0, 5);
  profile_add_granule (&profile, module, 0x10c0, 1); /* summed */
  uint64_t accesses[1];
  ck_assert_uint_eq (profile_global_accesses (&profile, accesses), 0);
  ck_assert_uint_eq (accesses[array], 13);
  profile_free (&profile);
}
END_TEST

START_TEST (test_small_globals_share_by_bytes)
{
  struct profile profile;
  uint32_t module = start_profile (&profile);
  /* 8 + 4 + 4 bytes in one granule, with padding: 16 bytes held.  */
  uint32_t a = add_global (&profile, module, "a", 0x2000, 8);
  uint32_t b = add_global (&profile, module, "b", 0x2008, 4);
  uint32_t c = add_global (&profile, module, "c", 0x2020, 4);
  profile_add_granule (&profile, module, 0x2000, 10);
  uint64_t accesses[3];
  profile_global_accesses (&profile, accesses);
  ck_assert_uint_eq (accesses[a], 5); /* 10 * 8/16 */
  ck_assert_uint_eq (accesses[b], 3); /* 10 * 4/16 = 2.5, rounded up */
  ck_assert_uint_eq (accesses[c], 3);
  profile_free (&profile);
}
END_TEST

START_TEST (test_cold_next_to_hot_stays_cold)
{
  struct profile profile;
  uint32_t module = start_profile (&profile);
  /* hot: 0x3020..0x3120 (granules 0x3000 to 0x3100); cold follows it
     from 0x3120, sharing the granule at 0x3100.  */
  uint32_t hot = add_global (&profile, module, "hot", 0x3020, 256);
  uint32_t cold = add_global (&profile, module, "cold", 0x3120, 512);
  for (uint64_t g = 0x3000; g <= 0x3100; g += 64)
    profile_add_granule (&profile, module, g, 100);
  uint64_t accesses[2];
  profile_global_accesses (&profile, accesses);
  ck_assert_uint_eq (accesses[cold], 0);
  ck_assert_uint_eq (accesses[hot], 500);
  profile_free (&profile);
}
END_TEST

START_TEST (test_aliases_get_the_same_accesses)
{
  struct profile profile;
  uint32_t module = start_profile (&profile);
  uint32_t name = add_global (&profile, module, "name", 0x4000, 64);
  uint32_t alias = add_global (&profile, module, "alias", 0x4000, 64);
  ck_assert_uint_eq (add_global (&profile, module, "name", 0x4000, 64), name);
  ck_assert_uint_eq (profile.global_count, 2);
  profile_add_granule (&profile, module, 0x4000, 9);
  uint64_t accesses[2];
  profile_global_accesses (&profile, accesses);
  ck_assert_uint_eq (accesses[name], 9);
  ck_assert_uint_eq (accesses[alias], 9);
  profile_free (&profile);
}
END_TEST

START_TEST (test_padding_is_reported_apart)
{
  struct profile profile;
  uint32_t module = start_profile (&profile);
  add_global (&profile, module, "x", 0x5000, 64);
  profile_add_granule (&profile, module, 0x5000, 2);
  profile_add_granule (&profile, module, 0x5040, 3); /* no global there */
  uint64_t accesses[1];
  ck_assert_uint_eq (profile_global_accesses (&profile, accesses), 3);
  ck_assert_uint_eq (accesses[0], 2);
  profile_free (&profile);
}
END_TEST

/* ---- The .mprof file ---- */

static char *
write_and_read (const struct profile *profile, size_t *size)
{
  char path[] = "/tmp/memprof-unit-globals-XXXXXX", error[512];
  int fd = mkstemp (path);
  ck_assert_int_ge (fd, 0);
  close (fd);
  ck_assert_msg (mprof_write (profile, path, error, sizeof error) == 0, "%s",
                 error);
  FILE *in = fopen (path, "rb");
  ck_assert_ptr_nonnull (in);
  fseek (in, 0, SEEK_END);
  *size = (size_t) ftell (in);
  fseek (in, 0, SEEK_SET);
  char *data = malloc (*size + 1);
  ck_assert_uint_eq (fread (data, 1, *size, in), *size);
  fclose (in);
  unlink (path);
  return data;
}

/* Granules and globals added in the order ORDER gives.  */
static void
globals_profile (struct profile *profile, bool reversed)
{
  uint32_t module = start_profile (profile);
  static const char *const names[3] = { "zeta", "alpha", "static_one" };
  for (int k = 0; k < 3; k++)
    {
      int i = reversed ? 2 - k : k;
      struct profile_global global
          = { module,
              profile_intern (profile, names[i]),
              i == 2 ? profile_intern (profile, "unit.c") : 0,
              i == 2 ? PROFILE_GLOBAL_LOCAL : 0,
              0x1000 + 0x100 * (uint64_t) i,
              128 };
      profile_add_global (profile, &global);
      profile_add_granule (profile, module, 0x1000 + 0x100 * (uint64_t) i,
                           (uint64_t) (i + 1) * 10);
    }
  profile->inputs = 1;
  profile->inputs_with_extra = 1;
}

START_TEST (test_mprof_globals_round_trip)
{
  struct profile first, second, again;
  char error[512];
  size_t size, again_size;
  globals_profile (&first, false);
  char *data = write_and_read (&first, &size);

  profile_init (&second);
  ck_assert_msg (mprof_read (&second, (const uint8_t *) data, size, "g.mprof",
                             error, sizeof error)
                     == 0,
                 "%s", error);
  ck_assert_uint_eq (second.global_inputs, 1);
  ck_assert_uint_eq (second.granule_count, 3);
  ck_assert_uint_eq (second.global_count, 3);
  uint64_t accesses[3];
  profile_global_accesses (&second, accesses);
  for (size_t i = 0; i < 3; i++)
    {
      const struct profile_global *global = &second.globals[i];
      const char *name = profile_string (&second, global->name);
      uint64_t index = (global->address - 0x1000) / 0x100;
      ck_assert_uint_eq (accesses[i], (index + 1) * 10);
      ck_assert_uint_eq (global->size, 128);
      if (strcmp (name, "static_one") == 0)
        {
          ck_assert_str_eq (profile_string (&second, global->file), "unit.c");
          ck_assert_uint_eq (global->flags, PROFILE_GLOBAL_LOCAL);
        }
      else
        ck_assert_uint_eq (global->file, 0);
    }

  /* The same bytes written again, and from the same contents added in
     another order.  */
  char *rewritten = write_and_read (&second, &again_size);
  ck_assert_uint_eq (again_size, size);
  ck_assert_int_eq (memcmp (rewritten, data, size), 0);
  globals_profile (&again, true);
  char *other = write_and_read (&again, &again_size);
  ck_assert_uint_eq (again_size, size);
  ck_assert_int_eq (memcmp (other, data, size), 0);

  /* Merged twice: the granules add up, the globals stay three.  */
  ck_assert_int_eq (mprof_read (&second, (const uint8_t *) data, size,
                                "g.mprof", error, sizeof error),
                    0);
  ck_assert_uint_eq (second.global_count, 3);
  ck_assert_uint_eq (second.global_inputs, 2);
  profile_global_accesses (&second, accesses);
  for (size_t i = 0; i < 3; i++)
    ck_assert_uint_eq (accesses[i],
                       ((second.globals[i].address - 0x1000) / 0x100 + 1) * 20);

  /* Every truncation is refused with a message.  */
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
  free (data);
  free (rewritten);
  free (other);
  profile_free (&first);
  profile_free (&second);
  profile_free (&again);
}
END_TEST

START_TEST (test_mprof_without_globals_has_no_section)
{
  struct profile profile;
  size_t size;
  profile_init (&profile);
  char *data = write_and_read (&profile, &size);
  struct profile read;
  char error[512];
  profile_init (&read);
  ck_assert_int_eq (mprof_read (&read, (const uint8_t *) data, size, "e.mprof",
                                error, sizeof error),
                    0);
  ck_assert_uint_eq (read.global_inputs, 0);
  ck_assert_uint_eq (read.granule_count, 0);
  free (data);
  profile_free (&profile);
  profile_free (&read);
}
END_TEST

/* ---- Side files of version 1 and 2 ---- */

/* A raw profile of one context, in memory.  */
static uint8_t *
raw_profile (size_t *size)
{
  static uintptr_t pcs[1] = { 0x1100 };
  struct memprof_raw_segment segment
      = { .start = 0x1000, .end = 0x2000, .offset = 0, .build_id_size = 20 };
  struct raw_profile_record record = { .id = 1, .depth = 1, .pcs = pcs };
  char path[] = "/tmp/memprof-unit-raw-XXXXXX", buffer[256];
  memset (segment.build_id, 0x5a, 20);
  mib_init_one (&record.mib, 64, 3, 0, 1, 0, 0);
  int fd = mkstemp (path);
  ck_assert_int_ge (fd, 0);
  struct raw_writer writer;
  raw_writer_init (&writer, fd, buffer, sizeof buffer);
  ck_assert_int_eq (raw_profile_write (&writer, &segment, 1, &record, 1), 0);
  close (fd);
  FILE *in = fopen (path, "rb");
  uint8_t *data = malloc (writer.written);
  ck_assert_uint_eq (fread (data, 1, writer.written, in), writer.written);
  fclose (in);
  unlink (path);
  *size = writer.written;
  return data;
}

/* A side file of VERSION for the profile of SIZE bytes at DATA, with
   GLOBALS granule records (version 2) after its one record; GLOBAL_COUNT
   is what the header says.  */
static size_t
side_file (uint8_t *out, uint32_t version, const uint8_t *data, size_t size,
           uint64_t global_count, size_t globals)
{
  struct memprof_extra_header header = {
    .magic = MEMPROF_EXTRA_MAGIC,
    .version = version,
    .header_size = 64,
    .profile_size = size,
    .profile_hash = memprof_fnv1a (MEMPROF_FNV_OFFSET, data, size),
    .record_count = 1,
    .granule_size = 64,
    .global_count = global_count,
  };
  struct memprof_extra_record record = { .stack_id = 1, .touched_bytes = 64 };
  memcpy (out, &header, 64);
  memcpy (out + 64, &record, 48);
  for (size_t i = 0; i < globals; i++)
    {
      struct memprof_extra_global global = { 0x4000 + 64 * i, 10 + i };
      memcpy (out + 112 + 16 * i, &global, 16);
    }
  return 112 + 16 * globals;
}

START_TEST (test_side_file_versions)
{
  size_t size;
  uint8_t *data = raw_profile (&size), side[256];
  char error[512];
  struct profile profile;

  /* Version 1: the records, no globals.  */
  size_t side_size = side_file (side, 1, data, size, 0, 0);
  profile_init (&profile);
  ck_assert_int_eq (profile_load_buffer (&profile, data, size, "p", side,
                                         side_size, "p.extra", error,
                                         sizeof error),
                    0);
  ck_assert_uint_eq (profile.inputs_with_extra, 1);
  ck_assert_uint_eq (profile.contexts[0].extra.touched_bytes, 64);
  ck_assert_uint_eq (profile.global_inputs, 0);
  ck_assert_uint_eq (profile.granule_count, 0);
  profile_free (&profile);

  /* Version 2: the records, then two granules of the program.  */
  side_size = side_file (side, 2, data, size, 2, 2);
  profile_init (&profile);
  ck_assert_int_eq (profile_load_buffer (&profile, data, size, "p", side,
                                         side_size, "p.extra", error,
                                         sizeof error),
                    0);
  ck_assert_uint_eq (profile.inputs_with_extra, 1);
  ck_assert_uint_eq (profile.contexts[0].extra.touched_bytes, 64);
  ck_assert_uint_eq (profile.global_inputs, 1);
  ck_assert_uint_eq (profile.granule_count, 2);
  ck_assert_uint_eq (profile.granules[1].address, 0x4040);
  ck_assert_uint_eq (profile.granules[1].accesses, 11);
  ck_assert_uint_eq (profile.granules[1].module, profile.main_module);
  profile_free (&profile);

  /* Version 2 whose global count is not its size: ignored whole.  */
  side_size = side_file (side, 2, data, size, 3, 2);
  profile_init (&profile);
  ck_assert_int_eq (profile_load_buffer (&profile, data, size, "p", side,
                                         side_size, "p.extra", error,
                                         sizeof error),
                    0);
  ck_assert_uint_eq (profile.inputs_with_extra, 0);
  ck_assert_uint_eq (profile.global_inputs, 0);
  ck_assert_uint_eq (profile.granule_count, 0);
  profile_free (&profile);
  free (data);
}
END_TEST

Suite *
globals_suite (void)
{
  Suite *suite = suite_create ("globals");
  TCase *rule = tcase_create ("rule");
  TCase *files = tcase_create ("files");
  tcase_add_test (rule, test_global_alone_gets_its_granules);
  tcase_add_test (rule, test_small_globals_share_by_bytes);
  tcase_add_test (rule, test_cold_next_to_hot_stays_cold);
  tcase_add_test (rule, test_aliases_get_the_same_accesses);
  tcase_add_test (rule, test_padding_is_reported_apart);
  suite_add_tcase (suite, rule);
  tcase_add_test (files, test_mprof_globals_round_trip);
  tcase_add_test (files, test_mprof_without_globals_has_no_section);
  tcase_add_test (files, test_side_file_versions);
  suite_add_tcase (suite, files);
  return suite;
}
