/* Symbolizing module-relative addresses against a binary's DWARF with
   elfutils' libdw: function (linkage name), file, line, column and the
   inline chain, as LLVM's symbolizer reports them, so that our frames are
   LLVM MemProf's frames.  PIE and non-PIE binaries alike.

   What "as LLVM reports them" means (llvm-profdata-19's raw reader, which
   symbolizes with DWARF only, linkage names, no symbol table):
   - the compile unit holding an address comes from .debug_aranges, and
     for units it does not list, from the unit's own address ranges;
   - in that unit, the innermost DW_TAG_subprogram or
     DW_TAG_inlined_subroutine whose ranges hold the address is frame 0;
     each enclosing DW_TAG_inlined_subroutine, up to and including the
     first DW_TAG_subprogram, adds a frame;
   - frame 0 takes file, line and column from the line table row of the
     address (the last row at or below it); every later frame takes them
     from the DW_AT_call_file/line/column of the inlined subroutine it
     called;
   - a function's name is DW_AT_linkage_name (or DW_AT_MIPS_linkage_name),
     else DW_AT_name, and its decl_line is DW_AT_decl_line, each found on
     the DIE or through DW_AT_abstract_origin / DW_AT_specification.
   On top of that, when no DWARF subprogram covers an address, the ELF
   symbol holding it gives one frame marked from_symbol_table (LLVM drops
   such addresses: see symbolize_llvm_drops).

   Where we differ from llvm-profdata, knowingly: we also find DWARF in a
   separate debug file (by build id or .gnu_debuglink), which LLVM never
   looks for; and file names are absolute paths (LLVM's raw reader keeps
   the line table's bare name; only its base name matters to it).  And
   llvm-profdata-19 has a bug that shows in its output, not in ours: its
   frame ids (Frame::hash) collide for frames of one function with nearby
   line offsets and columns, and it then prints one of those frames for
   all of them (testsuite/analysis/symbolize_test.py shows cases).

   A symbolizer is not thread-safe: it builds its per-unit indexes on
   first use.  */

#ifndef MEMPROF_ANALYSIS_SYMBOLIZE_H
#define MEMPROF_ANALYSIS_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct symbolizer;

/* One frame of an address's inline chain.  The strings stay valid until
   symbolizer_close.  */
struct symbol_frame
{
  const char *function; /* linkage name (DW_AT_linkage_name, else the name);
                           never NULL, "" when unknown */
  const char *file;     /* the source file of the line table row (frame 0)
                           or of DW_AT_call_file, made absolute with the
                           unit's DW_AT_comp_dir; "" when unknown */
  uint32_t line;        /* 0 when unknown */
  uint32_t column;      /* 0 when unknown (built without column info) */
  uint32_t decl_line;   /* DW_AT_decl_line of the (abstract) function */
  uint32_t from_symbol_table; /* 1: no DWARF subprogram covers the address;
                                 FUNCTION is the ELF symbol holding it, and
                                 no file, line or decl_line is known */
};

/* Open BINARY and its DWARF (in the file itself, or found through its
   build id or .gnu_debuglink, or split DWARF .dwo files).  Returns NULL
   with a message in ERROR when the file cannot be read, is not an ELF
   executable or shared object, or has no build id.  A binary without
   DWARF opens: its addresses symbolize from the ELF symbol table only.  */
struct symbolizer *symbolizer_open (const char *binary, char *error,
                                    size_t error_size);

/* The binary's GNU build id.  */
const uint8_t *symbolizer_build_id (const struct symbolizer *symbolizer,
                                    size_t *size);

/* Whether the binary (or its separate debug file) has DWARF.  */
bool symbolizer_has_dwarf (const struct symbolizer *symbolizer);

/* The frames of ADDRESS (an ELF virtual address of the binary, inside a
   call instruction: a return address minus 1, minus the load bias),
   innermost first: frames[0] is the function that holds ADDRESS after
   inlining, each later one the function it was inlined into, whose line
   and column are those of the inlined call; the last one is the
   out-of-line function.  Fills at most MAX frames (the innermost ones)
   and returns how many it filled.  When no DWARF subprogram covers
   ADDRESS but an ELF code symbol holds it (a sized one, or else the
   nearest sizeless one below it in its section), that is one frame with
   from_symbol_table set; when nothing is known (an address outside the
   binary, in the PLT, between functions), 0.  */
int symbolizer_lookup (struct symbolizer *symbolizer, uint64_t address,
                       struct symbol_frame *frames, int max);

void symbolizer_close (struct symbolizer *symbolizer);

/* LLVM's line offset of FRAME: line - decl_line, in 32 bits (it wraps
   when a call's line is before the function's decl_line, as in LLVM).  */
static inline uint32_t
symbol_frame_line_offset (const struct symbol_frame *frame)
{
  return frame->line - frame->decl_line;
}

/* Whether llvm-profdata drops the address whose frames (COUNT of them,
   innermost first) are FRAMES: nothing symbolized, no DWARF subprogram
   (symbol table only), a nameless function, or frame 0 in one of LLVM's
   runtime source files (memprof_malloc_linux.cpp,
   memprof_interceptors.cpp, memprof_new_delete.cpp, by base name).  A
   stack whose addresses are all dropped is dropped with its MIB.  */
bool symbolize_llvm_drops (const struct symbol_frame *frames, int count);

/* The demangled form of a C++ LINKAGE_NAME (libiberty's cplus_demangle
   with parameters), or a copy of LINKAGE_NAME when it is not mangled (C
   functions).  Malloc'd; NULL only when out of memory.  */
char *symbolize_demangle (const char *linkage_name);

/* Format BUILD_ID (SIZE bytes) as lowercase hex into OUT (at least
   2 * SIZE + 1 bytes).  */
void symbolize_hex (const uint8_t *build_id, size_t size, char *out);

#endif /* MEMPROF_ANALYSIS_SYMBOLIZE_H */
