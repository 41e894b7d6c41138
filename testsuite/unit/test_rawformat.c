/* The raw profile writer (rawwriter.c) and reader (formats/rawreader.c):
   a round trip of every field, the layout on disk, and bad input.

   The sample profile, laid out by hand (docs/profile-format.md):
       0  header (48 bytes)
      48  u64 2 segments, at 56 and 120 (64 bytes each)
     184  u64 3 MIBs (record 22 has alloc_count 0 and is not written)
     192    id 11, MIB at 200..343 (its access_histogram field at 336)
     344    id 33, MIB at 352..495 (access_histogram_size at 484),
            5 histogram values at 496..535
     536    id 44, MIB at 544..687
     688  u64 3 stacks
     696    id 11, depth 1 at 704, 1 pc
     720    id 33, depth 3 at 728, 3 pcs
     760    id 44, depth 3 at 768, 3 pcs
     800  end  */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rawreader.h"
#include "rawwriter.h"
#include "unit.h"

#define SAMPLE_SIZE 800
#define SAMPLE_MIB_OFFSET 184   /* 48 + 8 + 2 * 64 */
#define SAMPLE_STACK_OFFSET 688 /* 184 + 8 + 3 * (8 + 144) + 5 * 8 */

/* ---- The sample profile ---- */

static struct memprof_raw_segment sample_segments[2];
static struct raw_profile_record sample_records[4];
static const uint64_t sample_histogram[5] = { 1, 0, 2, 0, 255 };
static const uintptr_t sample_pcs_11[1] = { 0x401234 };
static const uintptr_t sample_pcs_22[2] = { 0x1, 0x2 };
static const uintptr_t sample_pcs_33[3] = { 0x401000, 0x402000, 0x403000 };
static const uintptr_t sample_pcs_44[3]
    = { 0x7f0000001000, 0x401000, 0x400100 };

static void
build_sample (void)
{
  struct memprof_mib other;

  memset (sample_segments, 0, sizeof sample_segments);
  sample_segments[0].start = 0x400000;
  sample_segments[0].end = 0x4a1000;
  sample_segments[0].offset = 0;
  sample_segments[0].build_id_size = 20;
  for (int i = 0; i < 20; i++)
    sample_segments[0].build_id[i] = (uint8_t) (i + 1);
  sample_segments[1].start = 0x7f0000001000;
  sample_segments[1].end = 0x7f0000009000;
  sample_segments[1].offset = 0x7f0000000000;
  sample_segments[1].build_id_size = 0;

  memset (sample_records, 0, sizeof sample_records);
  sample_records[0].id = 11;
  mib_init_one (&sample_records[0].mib, 128, 25616, 0, 0, 0, 0);
  /* A pointer in LLVM's files: must reach the disk as 0.  */
  sample_records[0].mib.access_histogram = 0xdeadbeefcafef00d;
  sample_records[0].depth = 1;
  sample_records[0].pcs = sample_pcs_11;

  sample_records[1].id = 22; /* alloc_count 0: not written */
  sample_records[1].depth = 2;
  sample_records[1].pcs = sample_pcs_22;

  sample_records[2].id = 33;
  mib_init_one (&sample_records[2].mib, 40, 5, 10, 20, 1, 2);
  sample_records[2].mib.access_histogram_size = 5;
  sample_records[2].histogram = sample_histogram;
  sample_records[2].depth = 3;
  sample_records[2].pcs = sample_pcs_33;

  sample_records[3].id = 44;
  mib_init_one (&sample_records[3].mib, 64, 64, 100, 300, 0, 0);
  mib_init_one (&other, 256, 1000, 250, 400, 0, 1);
  mib_merge (&sample_records[3].mib, &other);
  sample_records[3].mib.data_type_id = 0x1234;
  sample_records[3].depth = 3;
  sample_records[3].pcs = sample_pcs_44;
}

/* The test cases' temporary files go to a directory made (in the parent
   process, before the tests fork) for each test case and removed with
   whatever a failed test left in it.  */
static char temp_dir[3072];

static void
make_temp_dir (void)
{
  const char *dir = getenv ("TMPDIR");
  snprintf (temp_dir, sizeof temp_dir, "%s/memprof-unit-XXXXXX",
            dir != NULL && *dir != '\0' ? dir : "/tmp");
  if (mkdtemp (temp_dir) == NULL)
    {
      fprintf (stderr, "mkdtemp %s: %s\n", temp_dir, strerror (errno));
      abort ();
    }
}

static void
remove_temp_dir (void)
{
  DIR *dir = opendir (temp_dir);
  struct dirent *entry;
  char path[4096];

  if (dir == NULL)
    return;
  while ((entry = readdir (dir)) != NULL)
    if (strcmp (entry->d_name, ".") != 0 && strcmp (entry->d_name, "..") != 0)
      {
        snprintf (path, sizeof path, "%s/%s", temp_dir, entry->d_name);
        unlink (path);
      }
  closedir (dir);
  rmdir (temp_dir);
}

/* A new empty temporary file; its name goes to PATH (4096 bytes).  */
static int
make_temp_file (char *path, size_t size)
{
  int fd;

  snprintf (path, size, "%s/profile-XXXXXX", temp_dir);
  fd = mkstemp (path);
  ck_assert_msg (fd >= 0, "mkstemp %s: %s", path, strerror (errno));
  return fd;
}

static void
remove_temp_file (const char *path)
{
  ck_assert_int_eq (unlink (path), 0);
}

/* Write COPIES sample profiles, one after the other, to a new temporary
   file through a 64-byte buffer (so that most puts cross a drain).  */
static void
write_sample_file (char *path, size_t size, int copies)
{
  char buffer[64];
  struct raw_writer writer;
  int fd = make_temp_file (path, size);

  build_sample ();
  raw_writer_init (&writer, fd, buffer, sizeof buffer);
  for (int i = 0; i < copies; i++)
    ck_assert_int_eq (
        raw_profile_write (&writer, sample_segments, 2, sample_records, 4), 0);
  ck_assert_uint_eq (writer.written, (uint64_t) copies * SAMPLE_SIZE);
  ck_assert_int_eq (close (fd), 0);
}

/* The whole file at PATH, malloc'ed; its size goes to SIZE.  */
static uint8_t *
load_file (const char *path, size_t *size)
{
  FILE *f = fopen (path, "rb");
  uint8_t *bytes = malloc (65536);
  ck_assert_ptr_nonnull (f);
  ck_assert_ptr_nonnull (bytes);
  *size = fread (bytes, 1, 65536, f);
  fclose (f);
  return bytes;
}

/* COPIES sample profiles as written on disk (the file is removed).  */
static uint8_t *
sample_image (int copies, size_t *size)
{
  char path[4096];
  uint8_t *bytes;

  write_sample_file (path, sizeof path, copies);
  bytes = load_file (path, size);
  remove_temp_file (path);
  ck_assert_uint_eq (*size, (size_t) copies * SAMPLE_SIZE);
  return bytes;
}

static uint64_t
get_u64 (const uint8_t *bytes, size_t offset)
{
  uint64_t value;
  memcpy (&value, bytes + offset, sizeof value);
  return value;
}

static void
put_u64 (uint8_t *bytes, size_t offset, uint64_t value)
{
  memcpy (bytes + offset, &value, sizeof value);
}

static void
put_u32 (uint8_t *bytes, size_t offset, uint32_t value)
{
  memcpy (bytes + offset, &value, sizeof value);
}

/* ---- Round trip ---- */

static void
assert_sample_profile (const struct raw_read_profile *p, uint64_t offset)
{
  struct memprof_mib expected;

  ck_assert_uint_eq (p->offset, offset);
  ck_assert_uint_eq (p->version, 4);

  ck_assert_uint_eq (p->segment_count, 2);
  ck_assert_uint_eq (p->segments[0].start, 0x400000);
  ck_assert_uint_eq (p->segments[0].end, 0x4a1000);
  ck_assert_uint_eq (p->segments[0].build_id_size, 20);
  ck_assert_uint_eq (p->segments[0].build_id[0], 1);
  ck_assert_uint_eq (p->segments[0].build_id[19], 20);
  ck_assert_uint_eq (p->segments[0].build_id[20], 0);
  ck_assert_uint_eq (p->segments[1].offset, 0x7f0000000000);
  ck_assert_mem_eq (p->segments, sample_segments, sizeof sample_segments);

  /* Records 11, 33 and 44; 22 (alloc_count 0) is gone.  */
  ck_assert_uint_eq (p->record_count, 3);
  ck_assert_uint_eq (p->records[0].id, 11);
  ck_assert_uint_eq (p->records[0].mib.alloc_count, 1);
  ck_assert_uint_eq (p->records[0].mib.total_access_density, 20012);
  ck_assert_uint_eq (p->records[0].mib.total_lifetime_access_density, 20012000);
  ck_assert_uint_eq (p->records[0].mib.access_histogram, 0);
  ck_assert_uint_eq (p->records[0].mib.access_histogram_size, 0);
  ck_assert_ptr_null (p->records[0].histogram);
  expected = sample_records[0].mib;
  expected.access_histogram = 0;
  ck_assert_mem_eq (&p->records[0].mib, &expected, sizeof expected);

  ck_assert_uint_eq (p->records[1].id, 33);
  ck_assert_uint_eq (p->records[1].mib.total_size, 40);
  ck_assert_uint_eq (p->records[1].mib.total_lifetime, 10);
  ck_assert_uint_eq (p->records[1].mib.num_migrated_cpu, 1);
  ck_assert_uint_eq (p->records[1].mib.access_histogram_size, 5);
  ck_assert_ptr_nonnull (p->records[1].histogram);
  ck_assert_uint_eq (p->records[1].histogram[0], 1);
  ck_assert_uint_eq (p->records[1].histogram[1], 0);
  ck_assert_uint_eq (p->records[1].histogram[2], 2);
  ck_assert_uint_eq (p->records[1].histogram[3], 0);
  ck_assert_uint_eq (p->records[1].histogram[4], 255);
  ck_assert_mem_eq (&p->records[1].mib, &sample_records[2].mib,
                    sizeof expected);

  ck_assert_uint_eq (p->records[2].id, 44);
  ck_assert_uint_eq (p->records[2].mib.alloc_count, 2);
  ck_assert_uint_eq (p->records[2].mib.total_size, 320); /* 64 + 256 */
  ck_assert_uint_eq (p->records[2].mib.data_type_id, 0x1234);
  ck_assert_ptr_null (p->records[2].histogram);
  ck_assert_mem_eq (&p->records[2].mib, &sample_records[3].mib,
                    sizeof expected);

  ck_assert_uint_eq (p->stack_count, 3);
  ck_assert_uint_eq (p->stacks[0].id, 11);
  ck_assert_uint_eq (p->stacks[0].depth, 1);
  ck_assert_uint_eq (p->stacks[0].pcs[0], 0x401234);
  ck_assert_uint_eq (p->stacks[1].id, 33);
  ck_assert_uint_eq (p->stacks[1].depth, 3);
  ck_assert_uint_eq (p->stacks[1].pcs[0], 0x401000);
  ck_assert_uint_eq (p->stacks[1].pcs[1], 0x402000);
  ck_assert_uint_eq (p->stacks[1].pcs[2], 0x403000);
  ck_assert_uint_eq (p->stacks[2].id, 44);
  ck_assert_uint_eq (p->stacks[2].depth, 3);
  ck_assert_uint_eq (p->stacks[2].pcs[0], 0x7f0000001000);
  ck_assert_uint_eq (p->stacks[2].pcs[1], 0x401000);
  ck_assert_uint_eq (p->stacks[2].pcs[2], 0x400100);
  ck_assert_ptr_eq (raw_read_find_stack (p, 33), &p->stacks[1]);
  ck_assert_ptr_null (raw_read_find_stack (p, 22));
}

START_TEST (test_round_trip_every_field)
{
  char path[4096], error[512] = "";
  struct raw_read_file file;
  int result;

  write_sample_file (path, sizeof path, 1);
  result = raw_read_path (path, &file, error, sizeof error);
  remove_temp_file (path);
  ck_assert_msg (result == 0, "raw_read_path: %s", error);
  ck_assert_uint_eq (file.profile_count, 1);
  assert_sample_profile (&file.profiles[0], 0);
  raw_read_free (&file);
  ck_assert_uint_eq (file.profile_count, 0);
}
END_TEST

START_TEST (test_two_profiles_in_one_file)
{
  char path[4096], error[512] = "";
  struct raw_read_file file;
  int result;

  write_sample_file (path, sizeof path, 2);
  result = raw_read_path (path, &file, error, sizeof error);
  remove_temp_file (path);
  ck_assert_msg (result == 0, "raw_read_path: %s", error);
  ck_assert_uint_eq (file.profile_count, 2);
  assert_sample_profile (&file.profiles[0], 0);
  assert_sample_profile (&file.profiles[1], SAMPLE_SIZE);
  raw_read_free (&file);
}
END_TEST

START_TEST (test_layout_on_disk)
{
  static const uint8_t magic[8]
      = { 0x81, 0x72, 0x66, 0x6f, 0x72, 0x70, 0x6d, 0xff };
  size_t size;
  uint8_t *bytes = sample_image (1, &size);

  build_sample ();
  ck_assert_uint_eq (size, SAMPLE_SIZE);
  ck_assert_uint_eq (raw_profile_size (2, sample_records, 4), SAMPLE_SIZE);
  ck_assert_mem_eq (bytes, magic, 8);
  ck_assert_uint_eq (get_u64 (bytes, 8), 4);            /* version */
  ck_assert_uint_eq (get_u64 (bytes, 16), SAMPLE_SIZE); /* total size */
  ck_assert_uint_eq (get_u64 (bytes, 24), 48);
  ck_assert_uint_eq (get_u64 (bytes, 32), SAMPLE_MIB_OFFSET);
  ck_assert_uint_eq (get_u64 (bytes, 40), SAMPLE_STACK_OFFSET);
  ck_assert_uint_eq (get_u64 (bytes, 48), 2);  /* segments */
  ck_assert_uint_eq (get_u64 (bytes, 80), 20); /* first build id size */
  ck_assert_uint_eq (get_u64 (bytes, 184), 3); /* MIBs */
  ck_assert_uint_eq (get_u64 (bytes, 192), 11);
  ck_assert_uint_eq (get_u64 (bytes, 336), 0); /* access_histogram */
  ck_assert_uint_eq (get_u64 (bytes, 344), 33);
  ck_assert_uint_eq (get_u64 (bytes, 496 + 4 * 8), 255); /* 5th value */
  ck_assert_uint_eq (get_u64 (bytes, 536), 44);
  ck_assert_uint_eq (get_u64 (bytes, 688), 3); /* stacks */
  ck_assert_uint_eq (get_u64 (bytes, 704), 1); /* depth of stack 11 */
  ck_assert_uint_eq (get_u64 (bytes, 712), 0x401234);
  ck_assert_uint_eq (get_u64 (bytes, 768), 3); /* depth of stack 44 */
  ck_assert_uint_eq (get_u64 (bytes, 792), 0x400100);
  free (bytes);
}
END_TEST

START_TEST (test_empty_profile)
{
  char path[4096], buffer[64], error[512] = "";
  struct raw_writer writer;
  struct raw_read_file file;
  size_t size;
  uint8_t *bytes;
  int fd = make_temp_file (path, sizeof path);
  int result;

  /* 48 + 8 + 8 + 8: the three counts, all 0.  */
  ck_assert_uint_eq (raw_profile_size (0, NULL, 0), 72);
  raw_writer_init (&writer, fd, buffer, sizeof buffer);
  ck_assert_int_eq (raw_profile_write (&writer, NULL, 0, NULL, 0), 0);
  close (fd);
  bytes = load_file (path, &size);
  result = raw_read_path (path, &file, error, sizeof error);
  remove_temp_file (path);
  ck_assert_uint_eq (size, 72);
  ck_assert_uint_eq (get_u64 (bytes, 16), 72);
  ck_assert_uint_eq (get_u64 (bytes, 24), 48);
  ck_assert_uint_eq (get_u64 (bytes, 32), 56);
  ck_assert_uint_eq (get_u64 (bytes, 40), 64);
  ck_assert_msg (result == 0, "raw_read_path: %s", error);
  ck_assert_uint_eq (file.profile_count, 1);
  ck_assert_uint_eq (file.profiles[0].segment_count, 0);
  ck_assert_uint_eq (file.profiles[0].record_count, 0);
  ck_assert_uint_eq (file.profiles[0].stack_count, 0);
  raw_read_free (&file);
  free (bytes);
}
END_TEST

START_TEST (test_writer_through_tiny_buffer)
{
  char path[4096], buffer[7];
  uint8_t data[100], *bytes;
  struct raw_writer writer;
  size_t size;
  int fd = make_temp_file (path, sizeof path);

  for (int i = 0; i < 100; i++)
    data[i] = (uint8_t) (3 * i + 1);
  raw_writer_init (&writer, fd, buffer, sizeof buffer);
  raw_writer_put (&writer, data, 30);
  raw_writer_put (&writer, data + 30, 0);
  raw_writer_put (&writer, data + 30, 70);
  /* 100 = 14 * 7 + 2: 98 bytes reached the file, 2 wait in the buffer.  */
  ck_assert_uint_eq (writer.written, 98);
  ck_assert_int_eq (raw_writer_flush (&writer), 0);
  ck_assert_uint_eq (writer.written, 100);
  close (fd);
  bytes = load_file (path, &size);
  remove_temp_file (path);
  ck_assert_uint_eq (size, 100);
  ck_assert_mem_eq (bytes, data, 100);
  free (bytes);
}
END_TEST

START_TEST (test_writer_reports_failed_write)
{
  char buffer[64];
  struct raw_writer writer;
  int fd = open ("/dev/null", O_RDONLY);

  ck_assert_int_ge (fd, 0);
  build_sample ();
  raw_writer_init (&writer, fd, buffer, sizeof buffer);
  /* write(2) on a read-only descriptor fails with EBADF.  */
  ck_assert_int_eq (
      raw_profile_write (&writer, sample_segments, 2, sample_records, 4),
      EBADF);
  ck_assert_int_eq (writer.error, EBADF);
  ck_assert_uint_eq (writer.written, 0);
  close (fd);
}
END_TEST

/* ---- Version 3 ---- */

struct image
{
  uint8_t bytes[512];
  size_t used;
};

static void
append (struct image *image, const void *data, size_t size)
{
  ck_assert_uint_le (image->used + size, sizeof image->bytes);
  memcpy (image->bytes + image->used, data, size);
  image->used += size;
}

static void
append_u64 (struct image *image, uint64_t value)
{
  append (image, &value, sizeof value);
}

START_TEST (test_version_3_profile)
{
  /* 0 header | 48 no segments | 56 2 MIBs: 64 id 5, 72 MIB (132 bytes),
     204 id 6, 212 MIB | 344 2 stacks: 352 id 5 depth 1, 376 id 6 depth
     2 | 408 end.  */
  struct image image = { { 0 }, 0 };
  struct memprof_mib a, b;
  struct raw_read_file file;
  char error[512] = "";

  mib_init_one (&a, 128, 25616, 0, 0, 0, 0);
  a.access_histogram_size = 0x07070707; /* not in a v3 block */
  mib_init_one (&b, 256, 1000, 250, 400, 0, 1);
  append_u64 (&image, MEMPROF_RAW_MAGIC);
  append_u64 (&image, 3);
  append_u64 (&image, 408);
  append_u64 (&image, 48);
  append_u64 (&image, 56);
  append_u64 (&image, 344);
  append_u64 (&image, 0);
  append_u64 (&image, 2);
  append_u64 (&image, 5);
  append (&image, &a, MEMPROF_MIB_V3_SIZE);
  append_u64 (&image, 6);
  append (&image, &b, MEMPROF_MIB_V3_SIZE);
  ck_assert_uint_eq (image.used, 344);
  append_u64 (&image, 2);
  append_u64 (&image, 5);
  append_u64 (&image, 1);
  append_u64 (&image, 0x401234);
  append_u64 (&image, 6);
  append_u64 (&image, 2);
  append_u64 (&image, 0x401000);
  append_u64 (&image, 0x402000);
  ck_assert_uint_eq (image.used, 408);

  ck_assert_msg (raw_read_buffer (image.bytes, image.used, "v3", &file, error,
                                  sizeof error)
                     == 0,
                 "v3: %s", error);
  ck_assert_uint_eq (file.profile_count, 1);
  ck_assert_uint_eq (file.profiles[0].version, 3);
  ck_assert_uint_eq (file.profiles[0].record_count, 2);
  ck_assert_uint_eq (file.profiles[0].records[0].id, 5);
  ck_assert_uint_eq (file.profiles[0].records[0].mib.access_histogram_size, 0);
  ck_assert_ptr_null (file.profiles[0].records[0].histogram);
  a.access_histogram_size = 0;
  ck_assert_mem_eq (&file.profiles[0].records[0].mib, &a, sizeof a);
  ck_assert_uint_eq (file.profiles[0].records[1].id, 6);
  ck_assert_uint_eq (file.profiles[0].records[1].mib.access_histogram_size, 0);
  ck_assert_uint_eq (file.profiles[0].records[1].mib.total_size, 256);
  ck_assert_mem_eq (&file.profiles[0].records[1].mib, &b, sizeof b);
  ck_assert_uint_eq (file.profiles[0].stack_count, 2);
  ck_assert_uint_eq (file.profiles[0].stacks[1].depth, 2);
  ck_assert_uint_eq (file.profiles[0].stacks[1].pcs[1], 0x402000);
  raw_read_free (&file);
}
END_TEST

/* ---- Bad input ---- */

/* BYTES must be rejected by the reader with a message that gives the
   byte offset AT and contains FRAGMENT.  */
static void
assert_rejected (const uint8_t *bytes, size_t size, uint64_t at,
                 const char *fragment)
{
  struct raw_read_file file;
  char error[512] = "", where[64];

  ck_assert_int_eq (
      raw_read_buffer (bytes, size, "bad", &file, error, sizeof error), -1);
  snprintf (where, sizeof where,
            "bad: at byte %llu: ", (unsigned long long) at);
  ck_assert_msg (strncmp (error, where, strlen (where)) == 0,
                 "message \"%s\" does not start with \"%s\"", error, where);
  ck_assert_msg (strstr (error, fragment) != NULL,
                 "message \"%s\" lacks \"%s\"", error, fragment);
  /* Nothing is left to free.  */
  ck_assert_uint_eq (file.profile_count, 0);
  ck_assert_ptr_null (file.profiles);
}

/* The sample with the u64 at OFFSET replaced by VALUE must be rejected.  */
static void
assert_patch_rejected (size_t offset, uint64_t value, uint64_t at,
                       const char *fragment)
{
  size_t size;
  uint8_t *bytes = sample_image (1, &size);
  put_u64 (bytes, offset, value);
  assert_rejected (bytes, size, at, fragment);
  free (bytes);
}

START_TEST (test_empty_input)
{
  uint8_t byte = 0;
  assert_rejected (&byte, 0, 0, "the file is empty");
}
END_TEST

START_TEST (test_short_header)
{
  size_t size;
  uint8_t *bytes = sample_image (1, &size);
  assert_rejected (bytes, 47, 0, "expected a 48-byte profile header, found 47");
  free (bytes);
}
END_TEST

START_TEST (test_bad_magic)
{
  assert_patch_rejected (0, 0x0123456789abcdef, 0, "magic");
}
END_TEST

START_TEST (test_version_5)
{
  assert_patch_rejected (8, 5, 8, "version 5");
}
END_TEST

START_TEST (test_version_2)
{
  assert_patch_rejected (8, 2, 8, "version 2");
}
END_TEST

START_TEST (test_total_size_below_header)
{
  assert_patch_rejected (16, 47, 16, "profile size 47");
}
END_TEST

START_TEST (test_total_size_past_file)
{
  assert_patch_rejected (16, SAMPLE_SIZE + 1, 16, "profile size 801");
}
END_TEST

START_TEST (test_section_offsets_outside)
{
  assert_patch_rejected (24, 47, 24, "segment offset 47");
  assert_patch_rejected (32, SAMPLE_SIZE, 32, "MIB offset 800");
  assert_patch_rejected (40, UINT64_MAX, 40,
                         "stack offset 18446744073709551615");
}
END_TEST

START_TEST (test_huge_segment_count)
{
  /* 2^58 segments of 64 bytes: 2^64 bytes, 0 when wrapped.  */
  assert_patch_rejected (48, 1ULL << 58, 48,
                         "segment count 288230376151711744");
}
END_TEST

START_TEST (test_build_id_too_long)
{
  assert_patch_rejected (80, 33, 80, "build id size 33");
}
END_TEST

START_TEST (test_huge_mib_count)
{
  assert_patch_rejected (SAMPLE_MIB_OFFSET, UINT64_MAX, SAMPLE_MIB_OFFSET,
                         "MIB count 18446744073709551615");
}
END_TEST

START_TEST (test_one_mib_too_many)
{
  /* 4 * 152 bytes fit after the count, but the 4th MIB would start at
     688 and end at 840.  */
  assert_patch_rejected (SAMPLE_MIB_OFFSET, 4, 688, "expected MIB 4 of 4");
}
END_TEST

START_TEST (test_huge_histogram_size)
{
  size_t size;
  uint8_t *bytes = sample_image (1, &size);
  put_u32 (bytes, 484, 0xffffffff);
  assert_rejected (bytes, size, 484, "histogram size 4294967295 of MIB 2");
  free (bytes);
}
END_TEST

START_TEST (test_histogram_one_too_long)
{
  /* Record 44 is then read from the wrong place: its id has no stack.  */
  size_t size;
  uint8_t *bytes = sample_image (1, &size);
  put_u32 (bytes, 484, 6);
  assert_rejected (bytes, size, SAMPLE_MIB_OFFSET, "has no call stack");
  free (bytes);
}
END_TEST

START_TEST (test_huge_stack_count)
{
  /* 2^60 stacks of at least 16 bytes: 2^64, 0 when wrapped.  */
  assert_patch_rejected (SAMPLE_STACK_OFFSET, 1ULL << 60, SAMPLE_STACK_OFFSET,
                         "stack count 1152921504606846976");
}
END_TEST

START_TEST (test_one_stack_too_many)
{
  assert_patch_rejected (SAMPLE_STACK_OFFSET, 4, SAMPLE_SIZE,
                         "expected stack 4 of 4");
}
END_TEST

START_TEST (test_huge_stack_depth)
{
  assert_patch_rejected (704, 1ULL << 62, 704,
                         "claims 4611686018427387904 frames");
  /* 2^61 frames of 8 bytes: 2^64, 0 when wrapped.  */
  assert_patch_rejected (704, 1ULL << 61, 704,
                         "claims 2305843009213693952 frames");
}
END_TEST

START_TEST (test_mib_without_stack)
{
  /* Stack 44 becomes stack 99: MIB 44 has no stack.  */
  assert_patch_rejected (760, 99, SAMPLE_MIB_OFFSET,
                         "MIB with stack id 44 has no call stack");
}
END_TEST

START_TEST (test_trailing_bytes)
{
  size_t size;
  uint8_t *bytes = sample_image (1, &size);
  memset (bytes + size, 0, 10);
  assert_rejected (bytes, size + 10, SAMPLE_SIZE,
                   "expected a 48-byte profile header, found 10 bytes");
  free (bytes);
}
END_TEST

START_TEST (test_second_profile_bad_magic)
{
  size_t size;
  uint8_t *bytes = sample_image (2, &size);
  put_u64 (bytes, SAMPLE_SIZE, 0);
  assert_rejected (bytes, size, SAMPLE_SIZE, "magic");
  free (bytes);
}
END_TEST

START_TEST (test_missing_file)
{
  struct raw_read_file file;
  char error[512] = "";

  ck_assert_int_eq (raw_read_path ("/nonexistent/memprof.profraw", &file, error,
                                   sizeof error),
                    -1);
  ck_assert_msg (strstr (error, "cannot open") != NULL, "%s", error);
  ck_assert_uint_eq (file.profile_count, 0);
}
END_TEST

/* ---- Every truncation, and flipped bytes ---- */

/* Parse an exact-size malloc'ed copy of the first LENGTH bytes of BYTES;
   returns the reader's result, the message in ERROR.  */
static int
read_exact_copy (const uint8_t *bytes, size_t length, char *error,
                 size_t error_size)
{
  struct raw_read_file file;
  uint8_t *copy = malloc (length > 0 ? length : 1);
  int result;

  ck_assert_ptr_nonnull (copy);
  memcpy (copy, bytes, length);
  error[0] = '\0';
  result = raw_read_buffer (copy, length, "cut", &file, error, error_size);
  if (result == 0)
    raw_read_free (&file);
  free (copy);
  return result;
}

/* One profile (_i = 0) or two (_i = 1) cut at every length: only the cut
   right after the first of two profiles leaves a good file.  */
START_TEST (test_every_truncation_rejected)
{
  size_t size;
  uint8_t *bytes = sample_image (_i + 1, &size);
  char error[512];

  for (size_t length = 0; length < size; length++)
    {
      int result = read_exact_copy (bytes, length, error, sizeof error);
      if (length == SAMPLE_SIZE)
        {
          ck_assert_msg (result == 0, "the first profile alone: %s", error);
          continue;
        }
      ck_assert_msg (result == -1, "%zu of %zu bytes were accepted", length,
                     size);
      ck_assert_msg (strstr (error, "at byte ") != NULL,
                     "%zu bytes: message \"%s\"", length, error);
    }
  free (bytes);
}
END_TEST

START_TEST (test_every_truncation_with_matching_total_size)
{
  /* The header claims exactly the bytes that remain, so every section
     check is reached in turn.  */
  size_t size;
  uint8_t *bytes = sample_image (1, &size);
  char error[512];

  for (size_t length = MEMPROF_RAW_HEADER_SIZE; length < size; length++)
    {
      int result;
      put_u64 (bytes, 16, length);
      result = read_exact_copy (bytes, length, error, sizeof error);
      ck_assert_msg (result == -1, "%zu bytes were accepted", length);
      ck_assert_msg (strstr (error, "at byte ") != NULL,
                     "%zu bytes: message \"%s\"", length, error);
    }
  free (bytes);
}
END_TEST

static void
check_flipped_byte (uint8_t *bytes, size_t size, size_t offset, uint8_t value)
{
  struct raw_read_file file;
  char error[512] = "";
  uint8_t saved = bytes[offset];
  int result;

  bytes[offset] = value;
  result = raw_read_buffer (bytes, size, "flip", &file, error, sizeof error);
  bytes[offset] = saved;
  if (result == 0)
    {
      /* Accepted: then it is consistent.  */
      for (size_t p = 0; p < file.profile_count; p++)
        for (size_t r = 0; r < file.profiles[p].record_count; r++)
          ck_assert_ptr_nonnull (raw_read_find_stack (
              &file.profiles[p], file.profiles[p].records[r].id));
      raw_read_free (&file);
      return;
    }
  ck_assert_msg (result == -1, "byte %zu = 0x%02x: result %d", offset, value,
                 result);
  ck_assert_msg (strstr (error, "at byte ") != NULL,
                 "byte %zu = 0x%02x: message \"%s\"", offset, value, error);
}

START_TEST (test_flipped_bytes_never_crash)
{
  static const uint8_t values[] = { 0x00, 0x01, 0x7f, 0x80, 0xff };
  size_t size;
  uint8_t *bytes = sample_image (1, &size);

  for (size_t offset = 0; offset < size; offset++)
    for (size_t v = 0; v < sizeof values; v++)
      check_flipped_byte (bytes, size, offset, values[v]);
  free (bytes);
}
END_TEST

Suite *
rawformat_suite (void)
{
  Suite *suite = suite_create ("rawformat");
  TCase *round_trip = tcase_create ("round trip");
  TCase *bad = tcase_create ("bad input");
  TCase *fuzz = tcase_create ("truncation");

  tcase_add_unchecked_fixture (round_trip, make_temp_dir, remove_temp_dir);
  tcase_add_test (round_trip, test_round_trip_every_field);
  tcase_add_test (round_trip, test_two_profiles_in_one_file);
  tcase_add_test (round_trip, test_layout_on_disk);
  tcase_add_test (round_trip, test_empty_profile);
  tcase_add_test (round_trip, test_writer_through_tiny_buffer);
  tcase_add_test (round_trip, test_writer_reports_failed_write);
  tcase_add_test (round_trip, test_version_3_profile);
  suite_add_tcase (suite, round_trip);

  tcase_add_unchecked_fixture (bad, make_temp_dir, remove_temp_dir);
  tcase_add_test (bad, test_empty_input);
  tcase_add_test (bad, test_short_header);
  tcase_add_test (bad, test_bad_magic);
  tcase_add_test (bad, test_version_5);
  tcase_add_test (bad, test_version_2);
  tcase_add_test (bad, test_total_size_below_header);
  tcase_add_test (bad, test_total_size_past_file);
  tcase_add_test (bad, test_section_offsets_outside);
  tcase_add_test (bad, test_huge_segment_count);
  tcase_add_test (bad, test_build_id_too_long);
  tcase_add_test (bad, test_huge_mib_count);
  tcase_add_test (bad, test_one_mib_too_many);
  tcase_add_test (bad, test_huge_histogram_size);
  tcase_add_test (bad, test_histogram_one_too_long);
  tcase_add_test (bad, test_huge_stack_count);
  tcase_add_test (bad, test_one_stack_too_many);
  tcase_add_test (bad, test_huge_stack_depth);
  tcase_add_test (bad, test_mib_without_stack);
  tcase_add_test (bad, test_trailing_bytes);
  tcase_add_test (bad, test_second_profile_bad_magic);
  tcase_add_test (bad, test_missing_file);
  suite_add_tcase (suite, bad);

  tcase_add_unchecked_fixture (fuzz, make_temp_dir, remove_temp_dir);
  tcase_set_timeout (fuzz, 20);
  tcase_add_loop_test (fuzz, test_every_truncation_rejected, 0, 2);
  tcase_add_test (fuzz, test_every_truncation_with_matching_total_size);
  tcase_add_test (fuzz, test_flipped_bytes_never_crash);
  suite_add_tcase (suite, fuzz);
  return suite;
}
