/* symbolize-addresses: symbolize the allocation contexts of a raw profile
   with analysis/symbolize/symbolize.c, printing them as llvm-profdata-19 show
   --memory sees them, for symbolize_test.py to compare.

   Build, from the top of the tree:

     gcc -std=gnu11 -O2 -Wall -Wextra -Iinclude -Iformats -Ianalysis/symbolize \
       testsuite/analysis/symbolize-addresses.c analysis/symbolize/symbolize.c \
       formats/rawreader.c formats/mib.c \
       $(pkg-config --cflags --libs libdw libelf) -liberty \
       -o testsuite/analysis/symbolize-addresses

   Usage: symbolize-addresses [--time [--repeat N]] BINARY PROFILE
          symbolize-addresses --addresses BINARY < ADDRESSES
          symbolize-addresses --demangle NAME...

   For every MIB of every profile in PROFILE, in file order:

     stack ID count=AllocCount accesses=TotalAccessCount size=TotalSize
       FUNCTION LINE-OFFSET COLUMN INLINE
       ...

   one frame line per frame, leaf first, as llvm-profdata prints a
   Callstack: each PC expands to its inline chain, innermost first, every
   frame but the chain's last with INLINE 1; FUNCTION is the linkage name
   and LINE-OFFSET is line - decl_line in 32 bits.  PCs llvm-profdata
   drops (outside the binary, no DWARF subprogram, LLVM's runtime files)
   are left out, and a stack left with no frame prints as
   `stack ID dropped'.  A PC is rebased as llvm-profdata does: only when
   Start < PC <= End of the segment whose build id is the binary's, to
   PC - Offset (the segment's load bias).

   With --time, prints nothing per stack but, on stdout, how long opening
   the binary took and how long symbolizing every PC of every stack (each
   lookup on its own, no memo; N times over with --repeat) took.

   With --addresses, reads module-relative addresses (hex, one a line)
   and prints each as `ADDRESS COUNT' followed by its COUNT frames,
   innermost first, one a line with tab-separated fields:
     FUNCTION FILE LINE COLUMN DECL_LINE FROM_SYMBOL_TABLE

   With --demangle, prints symbolize_demangle of each NAME, one a line.

   Exit status 0, or 1 with a message on stderr when the binary or the
   profile cannot be read or no segment has the binary's build id.  */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rawreader.h"
#include "symbolize.h"

#define MAX_FRAMES 256

static double
now_ms (void)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* The segment of PROFILE that is BINARY's text, or NULL.  */
static const struct memprof_raw_segment *
binary_segment (const struct raw_read_profile *profile, const uint8_t *build_id,
                size_t build_id_size)
{
  for (size_t i = 0; i < profile->segment_count; i++)
    {
      const struct memprof_raw_segment *segment = &profile->segments[i];
      if (segment->build_id_size == build_id_size
          && memcmp (segment->build_id, build_id, build_id_size) == 0)
        return segment;
    }
  return NULL;
}

/* The address llvm-profdata symbolizes for PC.  */
static uint64_t
module_address (const struct memprof_raw_segment *segment, uint64_t pc)
{
  if (pc > segment->start && pc <= segment->end)
    return pc - segment->offset;
  return pc;
}

static void
print_stack (struct symbolizer *symbolizer,
             const struct memprof_raw_segment *segment,
             const struct raw_read_record *record,
             const struct raw_read_stack *stack)
{
  static struct symbol_frame frames[MAX_FRAMES];
  char *text = NULL;
  size_t size = 0;
  FILE *out = open_memstream (&text, &size);
  int kept = 0;

  for (uint64_t i = 0; i < stack->depth; i++)
    {
      uint64_t address = module_address (segment, stack->pcs[i]);
      int count = symbolizer_lookup (symbolizer, address, frames, MAX_FRAMES);
      if (symbolize_llvm_drops (frames, count))
        continue;
      for (int j = 0; j < count; j++)
        fprintf (out, "  %s %u %u %d\n", frames[j].function,
                 symbol_frame_line_offset (&frames[j]), frames[j].column,
                 j != count - 1);
      kept += count;
    }
  fclose (out);
  if (kept == 0)
    printf ("stack %llu dropped\n", (unsigned long long) record->id);
  else
    printf ("stack %llu count=%u accesses=%llu size=%llu\n%s",
            (unsigned long long) record->id, record->mib.alloc_count,
            (unsigned long long) record->mib.total_access_count,
            (unsigned long long) record->mib.total_size, text);
  free (text);
}

static void
time_lookups (struct symbolizer *symbolizer, const struct raw_read_file *file,
              const struct memprof_raw_segment *const *segments, long repeat,
              double open_ms)
{
  static struct symbol_frame frames[MAX_FRAMES];
  unsigned long long addresses = 0, frame_count = 0, symbolized = 0;
  double first_pass_ms = 0, start = now_ms ();
  for (long round = 0; round < repeat; round++)
    {
      for (size_t p = 0; p < file->profile_count; p++)
        {
          const struct raw_read_profile *profile = &file->profiles[p];
          for (size_t s = 0; s < profile->stack_count; s++)
            for (uint64_t i = 0; i < profile->stacks[s].depth; i++)
              {
                uint64_t address
                    = module_address (segments[p], profile->stacks[s].pcs[i]);
                int count = symbolizer_lookup (symbolizer, address, frames,
                                               MAX_FRAMES);
                addresses++;
                frame_count += count;
                symbolized += !symbolize_llvm_drops (frames, count);
              }
        }
      if (round == 0)
        first_pass_ms = now_ms () - start;
    }
  double total_ms = now_ms () - start;
  printf ("open: %.1f ms\n", open_ms);
  printf ("lookups: %llu addresses (%llu kept by LLVM's rules, %llu "
          "frames) in %.1f ms, first pass %.1f ms, %.2f us per address\n",
          addresses, symbolized, frame_count, total_ms, first_pass_ms,
          addresses ? total_ms * 1e3 / addresses : 0.0);
}

static int
symbolize_standard_input (struct symbolizer *symbolizer)
{
  static struct symbol_frame frames[MAX_FRAMES];
  char line[256];
  while (fgets (line, sizeof line, stdin) != NULL)
    {
      char *end;
      uint64_t address = strtoull (line, &end, 16);
      if (end == line)
        continue;
      int count = symbolizer_lookup (symbolizer, address, frames, MAX_FRAMES);
      printf ("0x%llx %d\n", (unsigned long long) address, count);
      for (int i = 0; i < count; i++)
        printf ("\t%s\t%s\t%u\t%u\t%u\t%u\n", frames[i].function,
                frames[i].file, frames[i].line, frames[i].column,
                frames[i].decl_line, frames[i].from_symbol_table);
    }
  return 0;
}

int
main (int argc, char **argv)
{
  char error[512];
  int timing = 0, addresses = 0;
  if (argc > 1 && strcmp (argv[1], "--demangle") == 0)
    {
      for (int i = 2; i < argc; i++)
        {
          char *name = symbolize_demangle (argv[i]);
          puts (name ? name : "(out of memory)");
          free (name);
        }
      return 0;
    }
  long repeat = 1;
  int arg = 1;
  for (; arg < argc && strncmp (argv[arg], "--", 2) == 0; arg++)
    if (strcmp (argv[arg], "--time") == 0)
      timing = 1;
    else if (strcmp (argv[arg], "--addresses") == 0)
      addresses = 1;
    else if (strcmp (argv[arg], "--repeat") == 0 && arg + 1 < argc)
      repeat = strtol (argv[++arg], NULL, 10);
    else
      break;
  if (argc - arg != 2 - addresses || repeat < 1)
    {
      fprintf (stderr,
               "usage: %s [--time [--repeat N]] BINARY PROFILE\n"
               "       %s --addresses BINARY < ADDRESSES\n"
               "Symbolize every allocation context of a raw MemProf "
               "profile against BINARY, or the addresses on stdin.\n",
               argv[0], argv[0]);
      return 2;
    }
  const char *binary = argv[arg], *path = argv[arg + 1 - addresses];

  double start = now_ms ();
  struct symbolizer *symbolizer = symbolizer_open (binary, error, sizeof error);
  double open_ms = now_ms () - start;
  if (symbolizer == NULL)
    {
      fprintf (stderr, "symbolize-addresses: %s\n", error);
      return 1;
    }
  if (addresses)
    {
      int status = symbolize_standard_input (symbolizer);
      symbolizer_close (symbolizer);
      return status;
    }
  struct raw_read_file file;
  if (raw_read_path (path, &file, error, sizeof error) != 0)
    {
      fprintf (stderr, "symbolize-addresses: %s\n", error);
      symbolizer_close (symbolizer);
      return 1;
    }

  size_t build_id_size;
  const uint8_t *build_id = symbolizer_build_id (symbolizer, &build_id_size);
  const struct memprof_raw_segment **segments
      = calloc (file.profile_count + 1, sizeof *segments);
  int status = 0;
  for (size_t p = 0; p < file.profile_count && status == 0; p++)
    {
      segments[p] = binary_segment (&file.profiles[p], build_id, build_id_size);
      if (segments[p] == NULL)
        {
          char hex[2 * 64 + 1];
          symbolize_hex (build_id, build_id_size, hex);
          fprintf (stderr,
                   "symbolize-addresses: %s: no segment has the build id "
                   "%s of %s\n",
                   path, hex, binary);
          status = 1;
        }
    }

  if (status == 0 && timing)
    time_lookups (symbolizer, &file, segments, repeat, open_ms);
  else if (status == 0)
    for (size_t p = 0; p < file.profile_count; p++)
      {
        const struct raw_read_profile *profile = &file.profiles[p];
        for (size_t r = 0; r < profile->record_count; r++)
          {
            const struct raw_read_stack *stack
                = raw_read_find_stack (profile, profile->records[r].id);
            if (stack == NULL)
              {
                fprintf (stderr,
                         "symbolize-addresses: %s: no stack for id %llu\n",
                         path, (unsigned long long) profile->records[r].id);
                status = 1;
                continue;
              }
            print_stack (symbolizer, segments[p], &profile->records[r], stack);
          }
      }

  free (segments);
  raw_read_free (&file);
  symbolizer_close (symbolizer);
  return status;
}
