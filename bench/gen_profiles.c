/* Writes COUNT raw profiles (LLVM MemProf raw version 4, with side files)
   of CONTEXTS allocation contexts each into DIRECTORY, as the runtime
   would for COUNT runs of one program: every profile draws its contexts
   from one pool of POOL distinct call stacks, so the merged result holds
   at most POOL contexts however many profiles there are.  Used by
   bench/merge_scale.py.

   usage: gen_profiles DIRECTORY COUNT CONTEXTS POOL  */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rawwriter.h"

#define MAX_DEPTH 16
/* Where the fake program's code is, as a PIE loaded at this bias.  */
#define TEXT_START 0x555555555000ULL
#define TEXT_SIZE 0x100000ULL
#define LOAD_BIAS 0x555555554000ULL

static uint64_t state;

static uint64_t
next_random (void)
{
  state = state * 6364136223846793005ULL + 1442695040888963407ULL;
  return state >> 17;
}

/* The PCs of stack NUMBER of the pool: made from the number alone, so
   every profile gives the same stack the same PCs.  */
static uint32_t
stack_of (uint64_t number, uintptr_t *pcs)
{
  uint64_t seed = number * 0x9e3779b97f4a7c15ULL + 1;
  uint32_t depth = 4 + (uint32_t) (seed % (MAX_DEPTH - 4));
  for (uint32_t i = 0; i < depth; i++)
    {
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      pcs[i] = TEXT_START + (seed >> 20) % TEXT_SIZE;
    }
  return depth;
}

static int
write_all (const char *path, int (*write) (struct raw_writer *, void *),
           void *cookie)
{
  static char buffer[1 << 16];
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0)
    return errno;
  struct raw_writer writer;
  raw_writer_init (&writer, fd, buffer, sizeof buffer);
  int error = write (&writer, cookie);
  if (error == 0)
    error = raw_writer_flush (&writer);
  if (close (fd) != 0 && error == 0)
    error = errno;
  return error;
}

struct profile
{
  struct memprof_raw_segment segment;
  struct raw_profile_record *records;
  struct memprof_extra_record *extras;
  size_t count;
  uint64_t size, hash;
};

static int
write_profile (struct raw_writer *writer, void *cookie)
{
  struct profile *p = cookie;
  int error = raw_profile_write (writer, &p->segment, 1, p->records, p->count);
  p->size = writer->written + writer->used;
  return error;
}

static int
write_side (struct raw_writer *writer, void *cookie)
{
  struct profile *p = cookie;
  struct memprof_extra_header header;
  memset (&header, 0, sizeof header);
  header.profile_size = p->size;
  header.profile_hash = p->hash;
  header.granule_size = 64;
  header.reason = MEMPROF_EXTRA_AT_EXIT;
  return raw_extra_write (writer, header, p->records, p->extras, p->count, NULL,
                          0);
}

int
main (int argc, char **argv)
{
  if (argc != 5)
    {
      fprintf (stderr, "usage: gen_profiles DIRECTORY COUNT CONTEXTS POOL\n");
      return 2;
    }
  const char *directory = argv[1];
  long count = atol (argv[2]), contexts = atol (argv[3]), pool = atol (argv[4]);
  if (count <= 0 || contexts <= 0 || pool < contexts)
    {
      fprintf (stderr, "gen_profiles: need COUNT > 0 and POOL >= CONTEXTS\n");
      return 2;
    }
  struct profile p;
  memset (&p, 0, sizeof p);
  p.segment.start = TEXT_START;
  p.segment.end = TEXT_START + TEXT_SIZE;
  p.segment.offset = LOAD_BIAS;
  p.segment.build_id_size = 20;
  for (int i = 0; i < 20; i++)
    p.segment.build_id[i] = (uint8_t) (0x40 + i);
  p.records = calloc ((size_t) contexts, sizeof *p.records);
  p.extras = calloc ((size_t) contexts, sizeof *p.extras);
  uintptr_t (*stacks)[MAX_DEPTH] = calloc ((size_t) contexts, sizeof *stacks);
  char *chosen = calloc ((size_t) pool, 1);
  if (p.records == NULL || p.extras == NULL || stacks == NULL || chosen == NULL)
    {
      fprintf (stderr, "gen_profiles: out of memory\n");
      return 1;
    }
  for (long n = 0; n < count; n++)
    {
      state = (uint64_t) n + 1;
      memset (chosen, 0, (size_t) pool);
      for (long i = 0; i < contexts; i++)
        {
          uint64_t number;
          do
            number = next_random () % (uint64_t) pool;
          while (chosen[number]);
          chosen[number] = 1;
          struct raw_profile_record *r = &p.records[i];
          r->id = (uint64_t) i + 1;
          r->depth = stack_of (number, stacks[i]);
          r->pcs = stacks[i];
          uint64_t size = 16 + next_random () % 4096;
          uint32_t start = (uint32_t) (next_random () % 100000);
          mib_init_one (&r->mib, size, next_random () % 10000, start,
                        start + (uint32_t) (next_random () % 1000),
                        (uint32_t) (next_random () % 2),
                        (uint32_t) (next_random () % 2));
          p.extras[i].stack_id = r->id;
          p.extras[i].touched_bytes = size / 2;
        }
      p.count = (size_t) contexts;
      char path[4096], side[4200];
      snprintf (path, sizeof path, "%s/profile.%05ld.profraw", directory, n);
      snprintf (side, sizeof side, "%s.extra", path);
      int error = write_all (path, write_profile, &p);
      if (error == 0)
        {
          /* The side file names the profile by its size and hash.  */
          FILE *in = fopen (path, "rb");
          char chunk[1 << 16];
          size_t got;
          p.hash = MEMPROF_FNV_OFFSET;
          while (in != NULL && (got = fread (chunk, 1, sizeof chunk, in)) > 0)
            p.hash = memprof_fnv1a (p.hash, chunk, got);
          if (in != NULL)
            fclose (in);
          error = write_all (side, write_side, &p);
        }
      if (error != 0)
        {
          fprintf (stderr, "gen_profiles: %s: %s\n", path, strerror (error));
          return 1;
        }
    }
  return 0;
}
