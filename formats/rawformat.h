/* LLVM MemProf raw profile, version 4 (and 3 for reading): the constants
   and layouts of docs/profile-format.md.  All integers little-endian, all
   structures packed; every section starts 8-byte aligned.  */

#ifndef MEMPROF_RAWFORMAT_H
#define MEMPROF_RAWFORMAT_H

#include <stdint.h>

#define MEMPROF_RAW_MAGIC 0xff6d70726f667281ULL /* "\x81rforpm\xff" on disk */
#define MEMPROF_RAW_VERSION 4
#define MEMPROF_RAW_OLDEST_VERSION 3
#define MEMPROF_RAW_HEADER_SIZE 48
#define MEMPROF_RAW_SEGMENT_SIZE 64
#define MEMPROF_RAW_BUILD_ID_MAX 32

struct memprof_raw_header
{
  uint64_t magic;
  uint64_t version;
  uint64_t total_size; /* this profile, header included */
  uint64_t segment_offset;
  uint64_t mib_offset;
  uint64_t stack_offset;
} __attribute__ ((packed));

struct memprof_raw_segment
{
  uint64_t start;  /* load address of the executable PT_LOAD */
  uint64_t end;    /* start + p_memsz */
  uint64_t offset; /* the module's load bias */
  uint64_t build_id_size;
  uint8_t build_id[MEMPROF_RAW_BUILD_ID_MAX];
} __attribute__ ((packed));

_Static_assert(sizeof (struct memprof_raw_header) == MEMPROF_RAW_HEADER_SIZE,
               "header");
_Static_assert(sizeof (struct memprof_raw_segment) == MEMPROF_RAW_SEGMENT_SIZE,
               "segment");

/* Stack ids LLVM's reader cannot hold (its hash maps' empty and tombstone
   keys).  */
#define MEMPROF_RAW_BAD_ID_1 UINT64_MAX
#define MEMPROF_RAW_BAD_ID_2 (UINT64_MAX - 1)

/* A frame address the runtime writes where recursion folding dropped
   frames (docs/profile-format.md, "Recursion folding"): above any user
   address, so no symbolizer finds code there and llvm-profdata drops it. */
#define MEMPROF_RAW_FOLD_PC 0xfffffffffffff01dULL

#endif /* MEMPROF_RAWFORMAT_H */
