/* The side file: what a profile's contexts need beyond LLVM's raw format
   (docs/profile-format.md, "The side file").  The runtime writes one next
   to each raw profile, as PROFILE.extra; `memprof' reads it, llvm-profdata
   never has to.  All integers little-endian, all structures packed.

     version 1: header | record * record_count
     version 2: header | record * record_count | global * global_count
     version 3: version 2 | peak | peak_context * peak.context_count
                | sample * peak.sample_count

   Version 2 adds the accesses to the program's own global and static
   variables; version 3 the heap's high-water mark (what was live at the
   peak, per context) and its timeline; `memprof' reads all three.  */

#ifndef MEMPROF_EXTRAFORMAT_H
#define MEMPROF_EXTRAFORMAT_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* "\x89MPXTRA\n" on disk.  */
#define MEMPROF_EXTRA_MAGIC 0x0a41525458504d89ULL
#define MEMPROF_EXTRA_VERSION 3
/* The first version, without globals: still read.  */
#define MEMPROF_EXTRA_VERSION_1 1
/* With globals, without the peak: still read.  */
#define MEMPROF_EXTRA_VERSION_2 2
#define MEMPROF_EXTRA_SUFFIX ".extra"

/* The side file's name for the profile PROFILE, so that no glob LLVM's
   documentation gives for raw profiles (memprof.profraw.*, *.profraw,
   default_%p.profraw) matches it: the last "profraw" of the file name
   becomes "extra" (memprof.profraw.1234 -> memprof.extra.1234,
   default_1234.profraw -> default_1234.extra); a name without "profraw"
   gets ".extra" appended (app.prof -> app.prof.extra).  Profiles written
   before this rule have PROFILE.extra (MEMPROF_EXTRA_SUFFIX), which
   readers still look for.  Writes at most SIZE bytes to OUT; returns the
   length, or -1 when it does not fit.  Allocates nothing.  */
static inline int
memprof_extra_path (const char *profile, char *out, size_t size)
{
  const char *slash = strrchr (profile, '/');
  const char *name = slash != NULL ? slash + 1 : profile;
  const char *last = NULL;
  int length;

  for (const char *at = strstr (name, "profraw"); at != NULL;
       at = strstr (at + 1, "profraw"))
    last = at;
  if (last != NULL)
    length = snprintf (out, size, "%.*sextra%s", (int) (last - profile),
                       profile, last + strlen ("profraw"));
  else
    length = snprintf (out, size, "%s%s", profile, MEMPROF_EXTRA_SUFFIX);
  return length >= 0 && (size_t) length < size ? length : -1;
}

/* Why the profile was written.  */
enum memprof_extra_reason
{
  MEMPROF_EXTRA_AT_EXIT = 0,
  MEMPROF_EXTRA_BY_API = 1,
  MEMPROF_EXTRA_ON_SIGNAL = 2,
  MEMPROF_EXTRA_ON_INTERVAL = 3
};

struct memprof_extra_header
{
  uint64_t magic;
  uint32_t version;
  uint32_t header_size;  /* 64 */
  uint64_t profile_size; /* bytes of the raw profile it describes */
  uint64_t profile_hash; /* FNV-1a (64 bits) of those bytes */
  uint64_t record_count;
  uint32_t granule_size; /* bytes per counter: 64, or 8 in histogram mode */
  uint32_t reason;       /* enum memprof_extra_reason */
  uint64_t timestamp_ms; /* when it was written, as the MIBs' timestamps */
  uint64_t global_count; /* version 2: global records after the records;
                            version 1: reserved, 0 */
} __attribute__ ((packed));

/* One per MIB of the profile, in any order.  Every count is weighted as
   the MIB's Totals are (sampling).  */
struct memprof_extra_record
{
  uint64_t stack_id;              /* the MIB's stack id */
  uint64_t untouched_allocations; /* allocations no access ever reached */
  uint64_t touched_bytes;         /* per allocation: granules with a
                                     nonzero counter times the granule
                                     size, at most the allocation's size;
                                     summed */
  uint64_t live_allocations;      /* still live when written (folded in
                                     from the live blocks) */
  uint64_t live_bytes;            /* their requested bytes */
  uint64_t access_sample_rate;    /* 0 or 1: every access counted; N: one
                                     in N counted N times (option
                                     access_sample_rate), so an allocation
                                     with no count may have been accessed */
} __attribute__ ((packed));

/* Version 2: one per 64-byte granule of the program's data (its PT_LOAD
   segments that are not executable: .data, .bss, .rodata...) whose
   accesses are not 0, in ascending address order.  Counts are those of the
   shadow at the dump: cumulative since start-up or memprof_reset, and,
   in histogram mode, the sum of the granule's eight 1-byte counters.  */
struct memprof_extra_global
{
  uint64_t address;  /* of the granule, module-relative (the ELF virtual
                        address: absolute address - load bias) */
  uint64_t accesses; /* instrumented accesses to its 64 bytes */
} __attribute__ ((packed));

/* Version 3: the heap's high-water mark, after the globals.  Bytes are
   requested bytes, weighted as the MIBs' Totals are (sampling: then an
   estimate).  Times are microseconds since the runtime started.  */
struct memprof_extra_peak
{
  uint64_t peak_bytes;       /* the most bytes live at once */
  uint64_t peak_blocks;      /* blocks live at that moment */
  uint64_t peak_time_us;     /* when it was reached */
  uint64_t snapshot_bytes;   /* live bytes when the per-context breakdown
                                was copied: the breakdown misses at most
                                peak_bytes - snapshot_bytes */
  uint64_t snapshot_time_us; /* when it was copied */
  uint64_t now_us;           /* when the side file was written */
  uint64_t context_count;    /* peak_context records that follow */
  uint64_t sample_count;     /* timeline samples after them */
  uint32_t sample_top;       /* entries of each sample's top: 8 */
  uint32_t sampled;          /* 1: sample_interval was on (estimates) */
  uint64_t reserved;
} __attribute__ ((packed));

/* A context live at the peak (its breakdown's snapshot).  */
struct memprof_extra_peak_context
{
  uint64_t stack_id;
  uint64_t bytes;  /* requested bytes live */
  uint64_t blocks; /* blocks live */
} __attribute__ ((packed));

/* The heap timeline: live bytes at one moment, and the contexts holding
   the most of them then (stack id 0: unused entry).  Samples are in time
   order, a few hundred at most whatever the run's length.  */
#define MEMPROF_EXTRA_SAMPLE_TOP 8
struct memprof_extra_sample
{
  uint64_t time_us;
  uint64_t live_bytes;
  uint64_t live_blocks;
  struct
  {
    uint64_t stack_id;
    uint64_t bytes;
  } top[MEMPROF_EXTRA_SAMPLE_TOP];
} __attribute__ ((packed));

/* The granule of the globals' counts, whatever the shadow's granule.  */
#define MEMPROF_EXTRA_GLOBAL_GRANULE 64

_Static_assert(sizeof (struct memprof_extra_header) == 64, "extra header");
_Static_assert(sizeof (struct memprof_extra_record) == 48, "extra record");
_Static_assert(sizeof (struct memprof_extra_global) == 16, "extra global");
_Static_assert(sizeof (struct memprof_extra_peak) == 80, "extra peak");
_Static_assert(sizeof (struct memprof_extra_peak_context) == 24,
               "extra peak context");
_Static_assert(sizeof (struct memprof_extra_sample) == 152, "extra sample");

/* FNV-1a, 64 bits, continued from HASH over SIZE bytes at DATA; start
   with MEMPROF_FNV_OFFSET.  */
#define MEMPROF_FNV_OFFSET 0xcbf29ce484222325ULL
#define MEMPROF_FNV_PRIME 0x100000001b3ULL
static inline uint64_t
memprof_fnv1a (uint64_t hash, const void *data, uint64_t size)
{
  const unsigned char *bytes = (const unsigned char *) data;
  for (uint64_t i = 0; i < size; i++)
    hash = (hash ^ bytes[i]) * MEMPROF_FNV_PRIME;
  return hash;
}

#endif /* MEMPROF_EXTRAFORMAT_H */
