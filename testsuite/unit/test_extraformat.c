/* The side file (formats/extraformat.h): FNV-1a, the hash the writer
   keeps of what reaches the file, and raw_extra_write's layout.

   The sample side file, laid out by hand (docs/profile-format.md):
       0  magic "\x89MPXTRA\n" | 8 version 2 | 12 header size 64
      16  profile size | 24 profile hash | 32 record count 3
      40  granule 64 | 44 reason 2 (signal) | 48 timestamp
      56  global count 2
      64  record of stack 11 (records[1], id 22, has alloc_count 0 and is
          not written)
     112  record of stack 33
     160  record of stack 44
     208  global: address 0x4040, 7 accesses
     224  global: address 0x40c0, 1 access
     240  end  */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rawwriter.h"
#include "unit.h"

#define SAMPLE_EXTRA_SIZE 240

/* ---- FNV-1a ---- */

static const struct
{
  const char *text;
  uint64_t hash; /* the published FNV-1a 64 test vectors */
} fnv_cases[] = {
  { "", 0xcbf29ce484222325ULL },
  { "a", 0xaf63dc4c8601ec8cULL },
  { "foobar", 0x85944171f73967e8ULL },
};

START_TEST (test_fnv1a_known_values)
{
  ck_assert_uint_eq (memprof_fnv1a (MEMPROF_FNV_OFFSET, fnv_cases[_i].text,
                                    strlen (fnv_cases[_i].text)),
                     fnv_cases[_i].hash);
}
END_TEST

START_TEST (test_fnv1a_continues)
{
  uint64_t hash = memprof_fnv1a (MEMPROF_FNV_OFFSET, "foo", 3);
  ck_assert_uint_eq (memprof_fnv1a (hash, "bar", 3), 0x85944171f73967e8ULL);
}
END_TEST

/* ---- Files ---- */

/* A new empty temporary file; its name goes to PATH.  */
static int
make_temp_file (char *path, size_t size)
{
  const char *dir = getenv ("TMPDIR");
  int fd;

  snprintf (path, size, "%s/memprof-extra-XXXXXX",
            dir != NULL && *dir != '\0' ? dir : "/tmp");
  fd = mkstemp (path);
  ck_assert_msg (fd >= 0, "mkstemp %s: %s", path, strerror (errno));
  return fd;
}

/* The whole file at PATH (at most CAPACITY bytes) into BYTES, then
   removed; returns its size.  */
static size_t
load_and_remove (const char *path, uint8_t *bytes, size_t capacity)
{
  FILE *f = fopen (path, "rb");
  size_t size;

  ck_assert_ptr_nonnull (f);
  size = fread (bytes, 1, capacity, f);
  fclose (f);
  ck_assert_int_eq (unlink (path), 0);
  return size;
}

static uint64_t
get_u64 (const uint8_t *bytes, size_t offset)
{
  uint64_t value;
  memcpy (&value, bytes + offset, sizeof value);
  return value;
}

static uint32_t
get_u32 (const uint8_t *bytes, size_t offset)
{
  uint32_t value;
  memcpy (&value, bytes + offset, sizeof value);
  return value;
}

START_TEST (test_writer_hashes_what_reaches_the_file)
{
  char path[4096], buffer[7];
  uint8_t data[100], bytes[128];
  struct raw_writer writer;
  int fd = make_temp_file (path, sizeof path);

  for (int i = 0; i < 100; i++)
    data[i] = (uint8_t) (7 * i + 3);
  raw_writer_init (&writer, fd, buffer, sizeof buffer);
  ck_assert_uint_eq (writer.hash, MEMPROF_FNV_OFFSET);
  raw_writer_put (&writer, data, 30);
  raw_writer_put (&writer, data + 30, 70);
  /* 98 bytes drained through a 7-byte buffer, 2 still in it.  */
  ck_assert_uint_eq (writer.hash, memprof_fnv1a (MEMPROF_FNV_OFFSET, data, 98));
  ck_assert_int_eq (raw_writer_flush (&writer), 0);
  close (fd);
  ck_assert_uint_eq (load_and_remove (path, bytes, sizeof bytes), 100);
  ck_assert_uint_eq (writer.hash,
                     memprof_fnv1a (MEMPROF_FNV_OFFSET, bytes, 100));
}
END_TEST

/* ---- The side file ---- */

static struct raw_profile_record sample_records[4];
static struct memprof_extra_record sample_extras[4];
static const struct memprof_extra_global sample_globals[2]
    = { { 0x4040, 7 }, { 0x40c0, 1 } };

static void
build_sample (void)
{
  static const uint64_t ids[4] = { 11, 22, 33, 44 };

  memset (sample_records, 0, sizeof sample_records);
  memset (sample_extras, 0, sizeof sample_extras);
  for (int i = 0; i < 4; i++)
    {
      sample_records[i].id = ids[i];
      if (i != 1) /* record 22: alloc_count 0, not in the profile */
        mib_init_one (&sample_records[i].mib, 100, 1, 0, 1, 0, 0);
      sample_extras[i].stack_id = 0xbad; /* replaced by the record's id */
      sample_extras[i].access_sample_rate = 10 * i + 5; /* written as is */
      sample_extras[i].untouched_allocations = 10 * i + 1;
      sample_extras[i].touched_bytes = 10 * i + 2;
      sample_extras[i].live_allocations = 10 * i + 3;
      sample_extras[i].live_bytes = 10 * i + 4;
    }
}

START_TEST (test_side_file_layout)
{
  char path[4096], buffer[64];
  uint8_t bytes[512];
  struct raw_writer writer;
  struct memprof_extra_header header = {
    .magic = 0xbad, /* set by the writer */
    .record_count = 0xbad,
    .profile_size = 800,
    .profile_hash = 0x0123456789abcdefULL,
    .granule_size = 64,
    .reason = MEMPROF_EXTRA_ON_SIGNAL,
    .timestamp_ms = 4321,
    .global_count = 0xbad, /* set by the writer */
  };
  int fd = make_temp_file (path, sizeof path);
  static const size_t written[3] = { 0, 2, 3 }; /* records 11, 33, 44 */

  build_sample ();
  raw_writer_init (&writer, fd, buffer, sizeof buffer);
  ck_assert_int_eq (raw_extra_write (&writer, header, sample_records,
                                     sample_extras, 4, sample_globals, 2),
                    0);
  ck_assert_uint_eq (writer.written, SAMPLE_EXTRA_SIZE);
  close (fd);
  ck_assert_uint_eq (load_and_remove (path, bytes, sizeof bytes),
                     SAMPLE_EXTRA_SIZE);
  ck_assert_mem_eq (bytes, "\x89MPXTRA\n", 8);
  ck_assert_uint_eq (get_u32 (bytes, 8), 2);
  ck_assert_uint_eq (get_u32 (bytes, 12), 64);
  ck_assert_uint_eq (get_u64 (bytes, 16), 800);
  ck_assert_uint_eq (get_u64 (bytes, 24), 0x0123456789abcdefULL);
  ck_assert_uint_eq (get_u64 (bytes, 32), 3);
  ck_assert_uint_eq (get_u32 (bytes, 40), 64);
  ck_assert_uint_eq (get_u32 (bytes, 44), 2);
  ck_assert_uint_eq (get_u64 (bytes, 48), 4321);
  ck_assert_uint_eq (get_u64 (bytes, 56), 2);
  for (int r = 0; r < 3; r++)
    {
      size_t at = 64 + 48 * (size_t) r, i = written[r];
      ck_assert_uint_eq (get_u64 (bytes, at), sample_records[i].id);
      ck_assert_uint_eq (get_u64 (bytes, at + 8), 10 * i + 1);
      ck_assert_uint_eq (get_u64 (bytes, at + 16), 10 * i + 2);
      ck_assert_uint_eq (get_u64 (bytes, at + 24), 10 * i + 3);
      ck_assert_uint_eq (get_u64 (bytes, at + 32), 10 * i + 4);
      ck_assert_uint_eq (get_u64 (bytes, at + 40), 10 * i + 5);
    }
  ck_assert_uint_eq (get_u64 (bytes, 208), 0x4040);
  ck_assert_uint_eq (get_u64 (bytes, 216), 7);
  ck_assert_uint_eq (get_u64 (bytes, 224), 0x40c0);
  ck_assert_uint_eq (get_u64 (bytes, 232), 1);
}
END_TEST

START_TEST (test_side_file_of_an_empty_profile)
{
  char path[4096], buffer[64];
  uint8_t bytes[128];
  struct raw_writer writer;
  struct memprof_extra_header header = { .granule_size = 8 };
  int fd = make_temp_file (path, sizeof path);

  raw_writer_init (&writer, fd, buffer, sizeof buffer);
  ck_assert_int_eq (raw_extra_write (&writer, header, NULL, NULL, 0, NULL, 0),
                    0);
  close (fd);
  ck_assert_uint_eq (load_and_remove (path, bytes, sizeof bytes), 64);
  ck_assert_uint_eq (get_u64 (bytes, 0), MEMPROF_EXTRA_MAGIC);
  ck_assert_uint_eq (get_u64 (bytes, 32), 0);
  ck_assert_uint_eq (get_u32 (bytes, 40), 8);
  ck_assert_uint_eq (get_u32 (bytes, 44), MEMPROF_EXTRA_AT_EXIT);
  ck_assert_uint_eq (get_u64 (bytes, 56), 0); /* no globals */
}
END_TEST

START_TEST (test_side_file_reports_failed_write)
{
  char buffer[64];
  struct raw_writer writer;
  struct memprof_extra_header header = { .granule_size = 64 };
  int fd = open ("/dev/null", O_RDONLY);

  ck_assert_int_ge (fd, 0);
  build_sample ();
  raw_writer_init (&writer, fd, buffer, sizeof buffer);
  /* write(2) on a read-only descriptor fails with EBADF.  */
  ck_assert_int_eq (raw_extra_write (&writer, header, sample_records,
                                     sample_extras, 4, sample_globals, 2),
                    EBADF);
  ck_assert_uint_eq (writer.written, 0);
  close (fd);
}
END_TEST

/* The side file's name: out of LLVM's globs (memprof.profraw.*,
   *.profraw), and PROFILE.extra for other names.  */
static const struct
{
  const char *profile, *side;
} side_names[] = {
  { "memprof.profraw.1234", "memprof.extra.1234" },
  { "/tmp/run/memprof.profraw.77", "/tmp/run/memprof.extra.77" },
  { "default_1234.profraw", "default_1234.extra" },
  { "app.profraw.1.profraw.2", "app.profraw.1.extra.2" },
  { "profraw.d/run.prof", "profraw.d/run.prof.extra" },
  { "run.prof", "run.prof.extra" },
};

START_TEST (test_side_file_name)
{
  char out[64];
  ck_assert_int_eq (
      memprof_extra_path (side_names[_i].profile, out, sizeof out),
      (int) strlen (side_names[_i].side));
  ck_assert_str_eq (out, side_names[_i].side);
}
END_TEST

START_TEST (test_side_file_name_too_long)
{
  char out[8];
  ck_assert_int_eq (
      memprof_extra_path ("memprof.profraw.1234", out, sizeof out), -1);
}
END_TEST

Suite *
extraformat_suite (void)
{
  Suite *suite = suite_create ("extraformat");
  TCase *hash = tcase_create ("hash");
  TCase *writer = tcase_create ("writer");

  tcase_add_loop_test (hash, test_fnv1a_known_values, 0,
                       sizeof fnv_cases / sizeof fnv_cases[0]);
  tcase_add_test (hash, test_fnv1a_continues);
  tcase_add_test (hash, test_writer_hashes_what_reaches_the_file);
  suite_add_tcase (suite, hash);

  tcase_add_test (writer, test_side_file_layout);
  tcase_add_test (writer, test_side_file_of_an_empty_profile);
  tcase_add_test (writer, test_side_file_reports_failed_write);
  tcase_add_loop_test (writer, test_side_file_name, 0,
                       sizeof side_names / sizeof side_names[0]);
  tcase_add_test (writer, test_side_file_name_too_long);
  suite_add_tcase (suite, writer);
  return suite;
}
