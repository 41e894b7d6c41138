/* The .mprof file: a merged, symbolized, indexed profile, written by
   `memprof merge' and read by every memprof subcommand and by the GCC
   plugin's memprof-use.  docs/profile-format.md describes it field by
   field:

     header (32 bytes, not compressed)
       u64 magic "\x89MPROF\r\n" | u32 version | u32 flags
       u64 payload size | u64 compressed size
     one zstd frame: the payload, a sequence of sections
       u32 tag | u32 reserved | u64 length | length bytes

   All integers little-endian.  */

#ifndef MEMPROF_ANALYSIS_MPROF_H
#define MEMPROF_ANALYSIS_MPROF_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

/* "\x89MPROF\r\n" on disk.  */
#define MPROF_MAGIC 0x0a0d464f52504d89ULL
#define MPROF_VERSION 1
#define MPROF_HEADER_SIZE 32
/* The largest payload a reader accepts (a guard against a header that
   lies): 16 GiB.  */
#define MPROF_MAX_PAYLOAD (16ULL << 30)

enum mprof_section
{
  MPROF_SUMMARY = 1,   /* u64 inputs | u64 inputs with a side file |
                          u32 histogram granule | u32 main module */
  MPROF_STRINGS = 2,   /* u64 count | count x (u32 length | bytes) */
  MPROF_MODULES = 3,   /* u64 count | count x (u32 build id size |
                          u8[32] build id | u32 path string) */
  MPROF_FRAMES = 4,    /* u64 count | count x (u32 function | u32 file |
                          u32 line | u32 column | u32 decl line |
                          u32 flags | u64 guid) */
  MPROF_LOCATIONS = 5, /* u64 count | count x (u32 module | u32 frame count |
                          u64 address | u32 first frame | u32 reserved) */
  MPROF_CONTEXTS = 6,  /* u64 count | per context: u32 location count |
                          u32 flags (1: has side-file data) |
                          u32 locations[count] | padding to 8 |
                          MemInfoBlock (144 bytes) |
                          u64 histogram[AccessHistogramSize] |
                          4 x u64 side-file data */
  MPROF_FUNCTIONS = 7, /* u64 count | count x (u64 guid | u32 first |
                          u32 contexts) | u64 total | u32 context[total]:
                          for each function GUID (ascending), the
                          contexts with a frame of that function */
  MPROF_GLOBALS = 8,   /* only when the profile counted globals:
                          u64 inputs that counted them |
                          u64 count | count x (u32 module | u32 0 |
                          u64 address | u64 accesses): granules, by module
                          and address |
                          u64 count | count x (u32 module | u32 name |
                          u32 file | u32 flags | u64 address | u64 size |
                          u64 accesses): symbolized globals, by module,
                          address, size, name, file, flags */
  /* Optional sections (tags from 100: readers that do not know them skip
     them).  */
  MPROF_PEAK = 100 /* only when a run tracked the heap's peak:
                      u64 runs | u64 bytes | u64 blocks | u64 time us |
                      u64 snapshot bytes | u64 snapshot time us |
                      u64 duration us | u32 sampled | u32 0 |
                      u64 count | count x (u32 context | u32 0 |
                      u64 bytes | u64 blocks): live at the peak |
                      u64 count | count x (u64 time us | u64 live bytes |
                      u64 live blocks | 8 x (u32 context or 0xffffffff |
                      u32 0 | u64 bytes)): the timeline */
};

/* Serialize PROFILE as a .mprof file into PATH ("-": stdout), atomically.
   Returns 0, or -1 with a message in ERROR.  */
int mprof_write (const struct profile *profile, const char *path, char *error,
                 size_t error_size);

/* Fold the .mprof file of SIZE bytes at DATA, named NAME in messages, into
   PROFILE.  Returns 0, or -1 with a message in ERROR naming NAME, the
   byte offset (in the file, or in the decompressed payload) and what was
   expected.  */
int mprof_read (struct profile *profile, const uint8_t *data, size_t size,
                const char *name, char *error, size_t error_size);

#endif /* MEMPROF_ANALYSIS_MPROF_H */
