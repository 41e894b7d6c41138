/* Symbolization with elfutils' libdw: see symbolize.h for what a frame
   is and how it matches LLVM's.

   How a lookup finds its frames.  At open, every compile unit is listed
   and the address ranges of all of them are folded into one sorted table
   of disjoint spans, each naming the unit LLVM's DWARFDebugAranges would
   name: the units' .debug_aranges entries, and the unit DIE's own ranges
   for units .debug_aranges does not list; where units overlap, the one
   that covered the span before it if it still covers, else the first
   unit.  A lookup finds its unit in that table by binary search.

   The first lookup in a unit walks the unit's DIE tree once (the split
   unit's, for split DWARF) and keeps every subprogram and inlined
   subroutine with code ("routines"), each with the nearest routine
   around it, and folds their ranges into a second table of disjoint
   spans naming the innermost routine: where ranges overlap, the routine
   met last in the walk, which is what LLVM's address-to-DIE map gives.
   Every later lookup in the unit is two binary searches, a line table
   search (libdw sorts and keeps each unit's table) and a walk up the
   parent links; each routine's name, declaration line and call
   position are read from its DIE once.  */

#include "symbolize.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <libiberty/demangle.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* GNU build ids are 20 bytes (SHA-1); other note sizes up to this.  */
#define BUILD_ID_MAX 64

/* A DW_TAG_subprogram or DW_TAG_inlined_subroutine with code.  */
struct routine
{
  Dwarf_Die die;
  int32_t parent; /* the nearest routine around it, or -1 */
  bool is_subprogram;
  bool resolved; /* the fields below have been read */
  const char *name;
  uint32_t decl_line;
  uint32_t call_file, call_line, call_column; /* of an inlined call */
};

/* Addresses [LOW, HIGH) whose unit or innermost routine is INDEX.  */
struct span
{
  uint64_t low, high;
  uint32_t index;
};

/* A unit's file names, each made absolute (joined to the unit's
   compilation directory) on first use.  */
struct file_table
{
  bool read;
  Dwarf_Files *files;
  size_t count;
  char **names; /* COUNT malloc'd names, NULL until made */
};

enum unit_state
{
  UNIT_NOT_INDEXED,
  UNIT_INDEXED,
  UNIT_BROKEN /* its DIEs could not be read: lookups find no routine */
};

struct unit
{
  Dwarf_Die cu_die;     /* in the main DWARF; its line table is the unit's */
  Dwarf_Die code_die;   /* the DIE tree with the routines: the split unit of
                         a skeleton unit when found, else cu_die */
  Dwarf_Off die_offset; /* of cu_die, as .debug_aranges names it */
  enum unit_state state;
  struct routine *routines;
  size_t routine_count;
  struct span *spans; /* routine spans, sorted, disjoint */
  size_t span_count;
  struct file_table line_files; /* cu_die's: the line table's files */
  struct file_table call_files; /* code_die's, for DW_AT_call_file (the
                                   same files unless the unit is split) */
};

/* A code symbol of the ELF symbol table, for addresses no DWARF
   subprogram covers.  */
struct symbol
{
  uint64_t start, end; /* Dwfl addresses; END == START when sizeless */
  const char *name;
  bool global;
  uint64_t section_end; /* where a sizeless symbol's code ends at most */
};

struct symbolizer
{
  Dwfl *dwfl;
  Dwfl_Module *module;
  Dwarf *dwarf;           /* NULL when the binary has no DWARF */
  Dwarf_Addr module_bias; /* Dwfl address of the binary's vaddr 0 */
  Dwarf_Addr dwarf_bias;  /* Dwfl address of the DWARF's address 0 */
  uint8_t build_id[BUILD_ID_MAX];
  size_t build_id_size;
  struct unit *units; /* in .debug_info order */
  size_t unit_count;
  struct span *unit_spans; /* sorted, disjoint */
  size_t unit_span_count;
  bool symbols_indexed;
  struct symbol *symbols; /* by priority: see index_symbols */
  size_t symbol_count;
  struct span *symbol_spans; /* Dwfl addresses -> symbol */
  size_t symbol_span_count;
};

static void
set_error (char *error, size_t error_size, const char *format, ...)
{
  va_list args;
  if (error == NULL || error_size == 0)
    return;
  va_start (args, format);
  vsnprintf (error, error_size, format, args);
  va_end (args);
}

/* ITEMS (an array of *CAPACITY elements of SIZE bytes), or a bigger copy
   of it, with room for NEEDED elements; NULL when out of memory, ITEMS
   then unchanged.  */
static void *
room_for (void *items, size_t *capacity, size_t needed, size_t size)
{
  if (needed <= *capacity)
    return items;
  size_t wanted = *capacity ? *capacity : 32;
  while (wanted < needed)
    wanted *= 2;
  void *bigger = realloc (items, wanted * size);
  if (bigger != NULL)
    *capacity = wanted;
  return bigger;
}

/* Make room in the array ITEMS (an lvalue) for NEEDED elements; false
   when out of memory.  A macro, so that ITEMS keeps its pointer type.  */
#define RESERVE(items, capacity, needed)                                       \
  ({                                                                           \
    void *bigger_ = room_for ((items), (capacity), (needed), sizeof *(items)); \
    if (bigger_ != NULL)                                                       \
      (items) = bigger_;                                                       \
    bigger_ != NULL;                                                           \
  })

/* The span of SPANS (COUNT, sorted, disjoint) holding ADDRESS, or
   NULL.  */
static const struct span *
find_span (const struct span *spans, size_t count, uint64_t address)
{
  size_t low = 0, high = count;
  while (low < high)
    {
      size_t middle = low + (high - low) / 2;
      if (spans[middle].high <= address)
        low = middle + 1;
      else
        high = middle;
    }
  if (low < count && spans[low].low <= address)
    return &spans[low];
  return NULL;
}

/* Append [LOW, HIGH) -> INDEX to *SPANS, merging it into the last span
   when that one ends at LOW with the same index.  */
static bool
append_span (struct span **spans, size_t *count, size_t *capacity, uint64_t low,
             uint64_t high, uint32_t index)
{
  if (*count > 0)
    {
      struct span *last = &(*spans)[*count - 1];
      if (last->high == low && last->index == index)
        {
          last->high = high;
          return true;
        }
    }
  if (!RESERVE (*spans, capacity, *count + 1))
    return false;
  (*spans)[(*count)++] = (struct span){ low, high, index };
  return true;
}

/* ---- Units ---- */

/* One end of an address range of a unit or a routine.  */
struct endpoint
{
  uint64_t address;
  uint32_t owner; /* unit index, or range index for routines */
  bool start;
};

static int
compare_endpoints (const void *a, const void *b)
{
  const struct endpoint *x = a, *y = b;
  if (x->address != y->address)
    return x->address < y->address ? -1 : 1;
  return 0;
}

struct endpoint_list
{
  struct endpoint *items;
  size_t count, capacity;
};

static bool
add_range (struct endpoint_list *list, uint64_t low, uint64_t high,
           uint32_t owner)
{
  if (low >= high)
    return true; /* empty ranges say nothing, in LLVM too */
  if (!RESERVE (list->items, &list->capacity, list->count + 2))
    return false;
  list->items[list->count++] = (struct endpoint){ low, owner, true };
  list->items[list->count++] = (struct endpoint){ high, owner, false };
  return true;
}

/* Add the address ranges of DIE (low_pc/high_pc or DW_AT_ranges).  */
static bool
add_die_ranges (struct endpoint_list *list, Dwarf_Die *die, uint32_t owner,
                bool *any)
{
  Dwarf_Addr base, start, end;
  ptrdiff_t offset = 0;
  while ((offset = dwarf_ranges (die, offset, &base, &start, &end)) > 0)
    {
      if (start < end)
        *any = true;
      if (!add_range (list, start, end, owner))
        return false;
    }
  return true;
}

static int
compare_offsets (const void *key, const void *element)
{
  Dwarf_Off offset = *(const Dwarf_Off *) key;
  const struct unit *unit = element;
  if (offset != unit->die_offset)
    return offset < unit->die_offset ? -1 : 1;
  return 0;
}

/* Fold the units' ranges into S->unit_spans as LLVM's
   DWARFDebugAranges::construct does: sweep the sorted ends keeping the
   units that cover the current address; a span keeps the unit of the
   span before it while that unit still covers, else takes the first
   covering unit.  */
static bool
build_unit_spans (struct symbolizer *s)
{
  struct endpoint_list ends = { NULL, 0, 0 };
  bool *listed = calloc (s->unit_count ? s->unit_count : 1, sizeof *listed);
  uint32_t *active = NULL; /* a multiset of unit indices */
  size_t active_count = 0, active_capacity = 0, span_capacity = 0;
  bool ok = false;
  if (listed == NULL)
    goto done;

  Dwarf_Aranges *aranges;
  size_t arange_count = 0;
  if (s->unit_count == 0 /* no unit for an entry to name */
      || dwarf_getaranges (s->dwarf, &aranges, &arange_count) != 0)
    arange_count = 0; /* unreadable: use the units' own ranges */
  for (size_t i = 0; i < arange_count; i++)
    {
      Dwarf_Addr start;
      Dwarf_Word length;
      Dwarf_Off die_offset;
      Dwarf_Arange *arange = dwarf_onearange (aranges, i);
      if (arange == NULL
          || dwarf_getarangeinfo (arange, &start, &length, &die_offset) != 0)
        continue;
      const struct unit *unit = bsearch (&die_offset, s->units, s->unit_count,
                                         sizeof *s->units, compare_offsets);
      if (unit == NULL)
        continue;
      uint32_t index = unit - s->units;
      listed[index] = true;
      if (length > UINT64_MAX - start)
        length = UINT64_MAX - start;
      if (!add_range (&ends, start, start + length, index))
        goto done;
    }
  for (size_t i = 0; i < s->unit_count; i++)
    {
      bool any = false;
      if (!listed[i] && !add_die_ranges (&ends, &s->units[i].cu_die, i, &any))
        goto done;
    }

  if (ends.count > 0) /* ENDS.ITEMS is NULL when no unit has a range */
    qsort (ends.items, ends.count, sizeof *ends.items, compare_endpoints);
  for (size_t i = 0; i < ends.count; i++)
    {
      const struct endpoint *end = &ends.items[i];
      if (i > 0 && ends.items[i - 1].address < end->address && active_count > 0)
        {
          uint64_t low = ends.items[i - 1].address;
          struct span *last = s->unit_span_count
                                  ? &s->unit_spans[s->unit_span_count - 1]
                                  : NULL;
          bool last_covers = false;
          if (last != NULL && last->high == low)
            for (size_t j = 0; j < active_count && !last_covers; j++)
              last_covers = active[j] == last->index;
          if (last_covers)
            last->high = end->address;
          else
            {
              uint32_t first = active[0];
              for (size_t j = 1; j < active_count; j++)
                if (active[j] < first)
                  first = active[j];
              if (!RESERVE (s->unit_spans, &span_capacity,
                            s->unit_span_count + 1))
                goto done;
              s->unit_spans[s->unit_span_count++]
                  = (struct span){ low, end->address, first };
            }
        }
      if (end->start)
        {
          if (!RESERVE (active, &active_capacity, active_count + 1))
            goto done;
          active[active_count++] = end->owner;
        }
      else
        for (size_t j = 0; j < active_count; j++)
          if (active[j] == end->owner)
            {
              active[j] = active[--active_count];
              break;
            }
    }
  ok = true;
done:
  free (ends.items);
  free (listed);
  free (active);
  return ok;
}

static bool
list_units (struct symbolizer *s)
{
  Dwarf_CU *cu = NULL, *next;
  Dwarf_Half version;
  uint8_t unit_type;
  Dwarf_Die cu_die, sub_die;
  size_t capacity = 0;
  while (dwarf_get_units (s->dwarf, cu, &next, &version, &unit_type, &cu_die,
                          &sub_die)
         == 0)
    {
      cu = next;
      if (unit_type != DW_UT_compile && unit_type != DW_UT_skeleton
          && unit_type != DW_UT_partial)
        continue; /* type units hold no code */
      if (!RESERVE (s->units, &capacity, s->unit_count + 1))
        return false;
      struct unit *unit = &s->units[s->unit_count++];
      memset (unit, 0, sizeof *unit);
      unit->cu_die = cu_die;
      unit->code_die = cu_die;
      /* A skeleton whose .dwo was not found keeps its own (routine-less)
         DIE: its addresses get no DWARF frame, as in LLVM.  */
      if (unit_type == DW_UT_skeleton && sub_die.addr != NULL)
        unit->code_die = sub_die;
      unit->die_offset = dwarf_dieoffset (&cu_die);
    }
  return true;
}

/* ---- Routines of one unit ---- */

struct walk_level
{
  Dwarf_Die die;   /* the DIE being visited at this depth */
  int32_t routine; /* the routine around it, or -1 */
};

/* Walk UNIT's DIE tree, keeping its routines in UNIT->routines (in tree
   order) and their ranges in RANGES (owner: routine index).  */
static bool
collect_routines (struct unit *unit, struct endpoint_list *ranges)
{
  struct walk_level *levels = NULL;
  size_t depth = 0, level_capacity = 0, routine_capacity = 0;
  Dwarf_Die child;
  bool ok = false;

  if (dwarf_child (&unit->code_die, &child) != 0)
    return true; /* no children, or unreadable: no routines */
  if (!RESERVE (levels, &level_capacity, depth + 1))
    return false;
  levels[depth++] = (struct walk_level){ child, -1 };

  while (depth > 0)
    {
      struct walk_level *level = &levels[depth - 1];
      int32_t inner = level->routine;
      int tag = dwarf_tag (&level->die);
      if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine)
        {
          bool any = false;
          uint32_t index = unit->routine_count;
          size_t before = ranges->count;
          if (!add_die_ranges (ranges, &level->die, index, &any))
            goto done;
          /* A routine without code (a declaration, an abstract
             instance) is never a frame, and holds no routine that has
             code.  */
          if (any)
            {
              if (!RESERVE (unit->routines, &routine_capacity,
                            unit->routine_count + 1))
                goto done;
              struct routine *routine = &unit->routines[unit->routine_count++];
              memset (routine, 0, sizeof *routine);
              routine->die = level->die;
              routine->parent = level->routine;
              routine->is_subprogram = tag == DW_TAG_subprogram;
              inner = index;
            }
          else
            ranges->count = before;
        }
      if (dwarf_haschildren (&level->die) > 0
          && dwarf_child (&level->die, &child) == 0)
        {
          if (!RESERVE (levels, &level_capacity, depth + 1))
            goto done;
          levels[depth++] = (struct walk_level){ child, inner };
          continue;
        }
      /* On to the next sibling, here or at a shallower depth.  */
      while (depth > 0)
        {
          int next = dwarf_siblingof (&levels[depth - 1].die,
                                      &levels[depth - 1].die);
          if (next == 0)
            break;
          if (next < 0)
            {
              ok = true; /* keep what was read before the bad DIE */
              goto done;
            }
          depth--;
        }
    }
  ok = true;
done:
  free (levels);
  return ok;
}

/* A max-heap of range indices, ordered by their owners' priority (for
   routines, their index: the routine met last in the walk wins).  */
struct heap
{
  uint32_t *items;
  size_t count, capacity;
};

static bool
heap_above (const struct endpoint_list *ranges, uint32_t a, uint32_t b)
{
  /* ranges->items[2 * i] is the start of range i; its owner the
     priority.  */
  uint32_t routine_a = ranges->items[2 * a].owner;
  uint32_t routine_b = ranges->items[2 * b].owner;
  return routine_a != routine_b ? routine_a > routine_b : a > b;
}

static bool
heap_push (struct heap *heap, const struct endpoint_list *ranges,
           uint32_t range)
{
  if (!RESERVE (heap->items, &heap->capacity, heap->count + 1))
    return false;
  size_t i = heap->count++;
  while (i > 0 && heap_above (ranges, range, heap->items[(i - 1) / 2]))
    {
      heap->items[i] = heap->items[(i - 1) / 2];
      i = (i - 1) / 2;
    }
  heap->items[i] = range;
  return true;
}

static void
heap_pop (struct heap *heap, const struct endpoint_list *ranges)
{
  uint32_t last = heap->items[--heap->count];
  size_t i = 0;
  for (;;)
    {
      size_t child = 2 * i + 1;
      if (child >= heap->count)
        break;
      if (child + 1 < heap->count
          && heap_above (ranges, heap->items[child + 1], heap->items[child]))
        child++;
      if (!heap_above (ranges, heap->items[child], last))
        break;
      heap->items[i] = heap->items[child];
      i = child;
    }
  if (heap->count > 0)
    heap->items[i] = last;
}

/* Fold RANGES (pairs of ends in range order; each range's owner its
   priority) into *SPANS: disjoint, sorted, each naming the owner of
   highest priority among the ranges that hold it.  */
static bool
fold_ranges (const struct endpoint_list *ranges, struct span **spans,
             size_t *span_count)
{
  size_t range_count = ranges->count / 2, span_capacity = 0;
  struct endpoint *ends
      = malloc ((ranges->count ? ranges->count : 1) * sizeof *ends);
  bool *ended = calloc (range_count ? range_count : 1, sizeof *ended);
  struct heap heap = { NULL, 0, 0 };
  bool ok = false;
  if (ends == NULL || ended == NULL)
    goto done;
  for (size_t i = 0; i < ranges->count; i++)
    {
      ends[i] = ranges->items[i];
      ends[i].owner = i / 2; /* the range, not its owner */
    }
  if (ranges->count > 0)
    qsort (ends, ranges->count, sizeof *ends, compare_endpoints);

  for (size_t i = 0; i < ranges->count; i++)
    {
      if (i > 0 && ends[i - 1].address < ends[i].address)
        {
          while (heap.count > 0 && ended[heap.items[0]])
            heap_pop (&heap, ranges);
          if (heap.count > 0
              && !append_span (spans, span_count, &span_capacity,
                               ends[i - 1].address, ends[i].address,
                               ranges->items[2 * heap.items[0]].owner))
            goto done;
        }
      if (ends[i].start)
        {
          if (!heap_push (&heap, ranges, ends[i].owner))
            goto done;
        }
      else
        ended[ends[i].owner] = true;
    }
  ok = true;
done:
  free (ends);
  free (ended);
  free (heap.items);
  return ok;
}

static void
index_unit (struct unit *unit)
{
  struct endpoint_list ranges = { NULL, 0, 0 };
  unit->state = UNIT_BROKEN;
  if (collect_routines (unit, &ranges)
      && fold_ranges (&ranges, &unit->spans, &unit->span_count))
    unit->state = UNIT_INDEXED;
  else
    {
      free (unit->routines);
      free (unit->spans);
      unit->routines = NULL;
      unit->spans = NULL;
      unit->routine_count = unit->span_count = 0;
    }
  free (ranges.items);
}

static uint32_t
unsigned_attribute (Dwarf_Die *die, unsigned int name)
{
  Dwarf_Attribute attribute;
  Dwarf_Word value;
  if (dwarf_attr (die, name, &attribute) == NULL
      || dwarf_formudata (&attribute, &value) != 0 || value > UINT32_MAX)
    return 0;
  return value;
}

static const char *
string_attribute (Dwarf_Die *die, unsigned int name)
{
  Dwarf_Attribute attribute;
  if (dwarf_attr_integrate (die, name, &attribute) == NULL)
    return NULL;
  return dwarf_formstring (&attribute);
}

static void
resolve_routine (struct routine *routine)
{
  if (routine->resolved)
    return;
  routine->resolved = true;
  const char *name = string_attribute (&routine->die, DW_AT_linkage_name);
  if (name == NULL)
    name = string_attribute (&routine->die, DW_AT_MIPS_linkage_name);
  if (name == NULL)
    name = string_attribute (&routine->die, DW_AT_name);
  routine->name = name ? name : "";
  int line;
  if (dwarf_decl_line (&routine->die, &line) == 0 && line > 0)
    routine->decl_line = line;
  if (!routine->is_subprogram)
    {
      routine->call_file = unsigned_attribute (&routine->die, DW_AT_call_file);
      routine->call_line = unsigned_attribute (&routine->die, DW_AT_call_line);
      routine->call_column
          = unsigned_attribute (&routine->die, DW_AT_call_column);
    }
}

/* Name INDEX of TABLE, the file table of DIE in UNIT, as an absolute
   path when the unit names its compilation directory; "" when
   unknown.  */
static const char *
file_name (struct unit *unit, struct file_table *table, Dwarf_Die *die,
           size_t index)
{
  if (!table->read)
    {
      table->read = true;
      if (dwarf_getsrcfiles (die, &table->files, &table->count) != 0)
        table->files = NULL, table->count = 0;
      else if ((table->names = calloc (table->count ? table->count : 1,
                                       sizeof *table->names))
               == NULL)
        table->count = 0;
    }
  if (index >= table->count)
    return "";
  if (table->names[index] != NULL)
    return table->names[index];
  const char *name = dwarf_filesrc (table->files, index, NULL, NULL);
  if (name == NULL)
    return "";
  Dwarf_Attribute attribute;
  const char *directory = dwarf_formstring (
      dwarf_attr (&unit->cu_die, DW_AT_comp_dir, &attribute));
  char *joined;
  if (name[0] == '/' || directory == NULL)
    joined = strdup (name);
  else if ((joined = malloc (strlen (directory) + strlen (name) + 2)) != NULL)
    sprintf (joined, "%s/%s", directory, name);
  if (joined == NULL)
    return name; /* out of memory: libdw's own, relative, name */
  return table->names[index] = joined;
}

static void
free_file_table (struct file_table *table)
{
  for (size_t i = 0; table->names != NULL && i < table->count; i++)
    free (table->names[i]);
  free (table->names);
}

/* ---- Opening and closing ---- */

/* Is PATH an ELF executable or shared object?  Says why not in ERROR.  */
static bool
check_elf (const char *path, char *error, size_t error_size)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    {
      set_error (error, error_size, "cannot open %s: %s", path,
                 strerror (errno));
      return false;
    }
  struct stat status;
  if (fstat (fd, &status) == 0 && !S_ISREG (status.st_mode))
    {
      set_error (error, error_size, "%s: not a regular file", path);
      close (fd);
      return false;
    }
  Elf *elf = elf_begin (fd, ELF_C_READ_MMAP, NULL);
  GElf_Ehdr header;
  bool ok = false;
  if (elf == NULL || elf_kind (elf) != ELF_K_ELF)
    set_error (error, error_size, "%s: not an ELF file", path);
  else if (gelf_getehdr (elf, &header) == NULL)
    set_error (error, error_size, "%s: unreadable ELF header: %s", path,
               elf_errmsg (-1));
  else if (header.e_type == ET_REL)
    set_error (error, error_size,
               "%s: a relocatable object (.o), not the linked program or "
               "library",
               path);
  else if (header.e_type == ET_CORE)
    set_error (error, error_size, "%s: a core file, not the program or library",
               path);
  else if (header.e_type != ET_EXEC && header.e_type != ET_DYN)
    set_error (error, error_size,
               "%s: an ELF file of type %u, not an executable or shared "
               "object",
               path, (unsigned) header.e_type);
  else
    ok = true;
  if (elf != NULL)
    elf_end (elf);
  close (fd);
  return ok;
}

static char *debuginfo_path = NULL;

static const Dwfl_Callbacks offline_callbacks = {
  .find_elf = dwfl_build_id_find_elf,
  .find_debuginfo = dwfl_standard_find_debuginfo,
  .section_address = dwfl_offline_section_address,
  .debuginfo_path = &debuginfo_path,
};

struct symbolizer *
symbolizer_open (const char *binary, char *error, size_t error_size)
{
  elf_version (EV_CURRENT);
  if (!check_elf (binary, error, error_size))
    return NULL;

  struct symbolizer *s = calloc (1, sizeof *s);
  if (s == NULL)
    {
      set_error (error, error_size, "out of memory");
      return NULL;
    }
  s->dwfl = dwfl_begin (&offline_callbacks);
  if (s->dwfl == NULL)
    {
      set_error (error, error_size, "%s: %s", binary, dwfl_errmsg (-1));
      goto fail;
    }
  dwfl_report_begin (s->dwfl);
  /* At base 0: Dwfl addresses are then the binary's own virtual
     addresses, PIE or not.  */
  s->module = dwfl_report_elf (s->dwfl, binary, binary, -1, 0, false);
  if (s->module == NULL || dwfl_report_end (s->dwfl, NULL, NULL) != 0)
    {
      set_error (error, error_size, "%s: %s", binary, dwfl_errmsg (-1));
      goto fail;
    }

  const unsigned char *bits;
  GElf_Addr note_address;
  int size = dwfl_module_build_id (s->module, &bits, &note_address);
  if (size <= 0)
    {
      set_error (error, error_size,
                 "%s: no GNU build id (.note.gnu.build-id); link it with "
                 "-Wl,--build-id so that profiles can name it",
                 binary);
      goto fail;
    }
  if (size > BUILD_ID_MAX)
    {
      set_error (error, error_size, "%s: a %d-byte build id is over %d bytes",
                 binary, size, BUILD_ID_MAX);
      goto fail;
    }
  memcpy (s->build_id, bits, size);
  s->build_id_size = size;

  if (dwfl_module_getelf (s->module, &s->module_bias) == NULL)
    {
      set_error (error, error_size, "%s: %s", binary, dwfl_errmsg (-1));
      goto fail;
    }
  s->dwarf = dwfl_module_getdwarf (s->module, &s->dwarf_bias);
  if (s->dwarf != NULL && (!list_units (s) || !build_unit_spans (s)))
    {
      set_error (error, error_size, "%s: out of memory reading its DWARF",
                 binary);
      goto fail;
    }
  return s;

fail:
  symbolizer_close (s);
  return NULL;
}

void
symbolizer_close (struct symbolizer *s)
{
  if (s == NULL)
    return;
  for (size_t i = 0; i < s->unit_count; i++)
    {
      free (s->units[i].routines);
      free (s->units[i].spans);
      free_file_table (&s->units[i].line_files);
      free_file_table (&s->units[i].call_files);
    }
  free (s->units);
  free (s->unit_spans);
  free (s->symbols);
  free (s->symbol_spans);
  if (s->dwfl != NULL)
    dwfl_end (s->dwfl);
  free (s);
}

const uint8_t *
symbolizer_build_id (const struct symbolizer *s, size_t *size)
{
  *size = s->build_id_size;
  return s->build_id;
}

bool
symbolizer_has_dwarf (const struct symbolizer *s)
{
  return s->dwarf != NULL;
}

/* ---- Lookup ---- */

static bool
is_code_symbol (const GElf_Sym *symbol, GElf_Word section)
{
  int type = GELF_ST_TYPE (symbol->st_info);
  return (type == STT_FUNC || type == STT_GNU_IFUNC || type == STT_NOTYPE)
         && section != SHN_UNDEF && section < SHN_LORESERVE;
}

/* Lower priority first: sizeless symbols, then sized ones by start
   address (a symbol inside another wins), local before global (a global
   name wins over a local alias).  */
static int
compare_symbol_priority (const void *a, const void *b)
{
  const struct symbol *x = a, *y = b;
  bool x_sized = x->end > x->start, y_sized = y->end > y->start;
  if (x_sized != y_sized)
    return x_sized ? 1 : -1;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  if (x->global != y->global)
    return x->global ? 1 : -1;
  return strcmp (x->name, y->name);
}

static int
compare_symbol_starts (const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
  return x < y ? -1 : x > y;
}

/* Read the module's code symbols once and fold them into spans: a sized
   symbol holds [start, start + size); a sizeless one (an assembler
   label, _init) holds its address up to the next symbol or the end of
   its section, where no sized symbol does.  */
static void
index_symbols (struct symbolizer *s)
{
  struct endpoint_list ranges = { NULL, 0, 0 };
  uint64_t *starts = NULL;
  size_t capacity = 0;
  s->symbols_indexed = true;
  int count = dwfl_module_getsymtab (s->module);
  for (int i = 1; i < count; i++)
    {
      GElf_Sym symbol;
      GElf_Addr address;
      GElf_Word section;
      Elf *elf;
      Dwarf_Addr bias;
      const char *name = dwfl_module_getsym_info (
          s->module, i, &symbol, &address, &section, &elf, &bias);
      if (name == NULL || name[0] == '\0' || !is_code_symbol (&symbol, section))
        continue;
      GElf_Shdr header;
      Elf_Scn *scn = elf ? elf_getscn (elf, section) : NULL;
      if (scn == NULL || gelf_getshdr (scn, &header) == NULL
          || !(header.sh_flags & SHF_EXECINSTR))
        continue;
      if (!RESERVE (s->symbols, &capacity, s->symbol_count + 1))
        goto fail;
      s->symbols[s->symbol_count++] = (struct symbol){
        .start = address,
        .end = address + symbol.st_size,
        .name = name,
        .global = GELF_ST_BIND (symbol.st_info) != STB_LOCAL,
        .section_end = header.sh_addr + header.sh_size + bias,
      };
    }
  if (s->symbol_count == 0)
    return;
  qsort (s->symbols, s->symbol_count, sizeof *s->symbols,
         compare_symbol_priority);

  /* Every symbol's start, sorted: where a sizeless symbol ends.  */
  starts = malloc (s->symbol_count * sizeof *starts);
  if (starts == NULL)
    goto fail;
  for (size_t i = 0; i < s->symbol_count; i++)
    starts[i] = s->symbols[i].start;
  qsort (starts, s->symbol_count, sizeof *starts, compare_symbol_starts);
  for (size_t i = 0; i < s->symbol_count; i++)
    {
      const struct symbol *symbol = &s->symbols[i];
      uint64_t end = symbol->end;
      if (end == symbol->start)
        {
          size_t low = 0, high = s->symbol_count;
          while (low < high) /* the first start above this one */
            {
              size_t middle = low + (high - low) / 2;
              if (starts[middle] <= symbol->start)
                low = middle + 1;
              else
                high = middle;
            }
          end = low < s->symbol_count ? starts[low] : symbol->section_end;
          if (end > symbol->section_end)
            end = symbol->section_end;
        }
      if (!add_range (&ranges, symbol->start, end, i))
        goto fail;
    }
  if (fold_ranges (&ranges, &s->symbol_spans, &s->symbol_span_count))
    goto done;
fail:
  free (s->symbol_spans);
  s->symbol_spans = NULL;
  s->symbol_span_count = 0;
done:
  free (starts);
  free (ranges.items);
}

/* One frame for ADDRESS from the ELF symbol table, or none.  */
static int
lookup_symbol_table (struct symbolizer *s, uint64_t address,
                     struct symbol_frame *frame)
{
  if (!s->symbols_indexed)
    index_symbols (s);
  const struct span *span = find_span (s->symbol_spans, s->symbol_span_count,
                                       address + s->module_bias);
  if (span == NULL)
    return 0;
  *frame = (struct symbol_frame){ .function = s->symbols[span->index].name,
                                  .file = "",
                                  .from_symbol_table = 1 };
  return 1;
}

int
symbolizer_lookup (struct symbolizer *s, uint64_t address,
                   struct symbol_frame *frames, int max)
{
  if (max <= 0)
    return 0;
  if (s->dwarf == NULL)
    return lookup_symbol_table (s, address, frames);

  /* The address as the DWARF writes it.  */
  uint64_t at = address + s->module_bias - s->dwarf_bias;
  const struct span *unit_span
      = find_span (s->unit_spans, s->unit_span_count, at);
  if (unit_span == NULL)
    return lookup_symbol_table (s, address, frames);
  struct unit *unit = &s->units[unit_span->index];
  if (unit->state == UNIT_NOT_INDEXED)
    index_unit (unit);
  const struct span *span = find_span (unit->spans, unit->span_count, at);
  if (span == NULL)
    return lookup_symbol_table (s, address, frames);

  int count = 0;
  const struct routine *called = NULL; /* the inlined routine below */
  for (int32_t index = span->index; index >= 0 && count < max;)
    {
      struct routine *routine = &unit->routines[index];
      struct symbol_frame *frame = &frames[count++];
      resolve_routine (routine);
      *frame = (struct symbol_frame){ .function = routine->name,
                                      .file = "",
                                      .decl_line = routine->decl_line };
      if (called == NULL)
        {
          Dwarf_Line *row = dwarf_getsrc_die (&unit->cu_die, at);
          int line = 0, column = 0;
          Dwarf_Files *files;
          size_t file;
          if (row != NULL)
            {
              if (dwarf_lineno (row, &line) == 0 && line > 0)
                frame->line = line;
              if (dwarf_linecol (row, &column) == 0 && column > 0)
                frame->column = column;
              if (dwarf_line_file (row, &files, &file) == 0)
                {
                  frame->file = file_name (unit, &unit->line_files,
                                           &unit->cu_die, file);
                  if (files != unit->line_files.files)
                    frame->file = dwarf_linesrc (row, NULL, NULL) ?: "";
                }
            }
        }
      else
        {
          frame->file = unit->code_die.addr == unit->cu_die.addr
                            ? file_name (unit, &unit->line_files, &unit->cu_die,
                                         called->call_file)
                            : file_name (unit, &unit->call_files,
                                         &unit->code_die, called->call_file);
          frame->line = called->call_line;
          frame->column = called->call_column;
        }
      if (routine->is_subprogram)
        break;
      called = routine;
      index = routine->parent;
    }
  return count;
}

/* ---- Helpers ---- */

static bool
is_llvm_runtime_file (const char *path)
{
  const char *base = strrchr (path, '/');
  base = base ? base + 1 : path;
  return strcmp (base, "memprof_malloc_linux.cpp") == 0
         || strcmp (base, "memprof_interceptors.cpp") == 0
         || strcmp (base, "memprof_new_delete.cpp") == 0;
}

bool
symbolize_llvm_drops (const struct symbol_frame *frames, int count)
{
  return count <= 0 || frames[0].from_symbol_table
         || frames[0].function[0] == '\0'
         || is_llvm_runtime_file (frames[0].file);
}

char *
symbolize_demangle (const char *linkage_name)
{
  if (linkage_name == NULL)
    linkage_name = "";
  char *demangled = cplus_demangle (linkage_name, DMGL_PARAMS | DMGL_ANSI);
  if (demangled != NULL)
    return demangled;
  return strdup (linkage_name);
}

void
symbolize_hex (const uint8_t *build_id, size_t size, char *out)
{
  static const char digits[] = "0123456789abcdef";
  for (size_t i = 0; i < size; i++)
    {
      out[2 * i] = digits[build_id[i] >> 4];
      out[2 * i + 1] = digits[build_id[i] & 15];
    }
  out[2 * size] = '\0';
}
