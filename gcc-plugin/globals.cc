/* memprof-use for global variables: with -fplugin-arg-memprof-use=FILE (a
   .mprof file whose profiles counted the accesses to globals: runtime
   side files of version 2, merged with --binary), every variable defined
   in the unit is looked up in the profile by the name the symbol table
   gives it and placed in a section of its own by its temperature:

     hot:  accesses per byte at least global-hot-density (default 1)
           -> .data.hot.NAME, .bss.hot.NAME, .rodata.hot.NAME,
              .data.rel.ro.hot.NAME
     cold: never accessed, and at least global-cold-size bytes (default 64)
           -> .data.unlikely.NAME, .bss.unlikely.NAME, ...

   The prefix is the one GCC would have chosen (categorize_decl_for_section:
   .bss for an all-zero initializer, .rodata for read-only data without
   relocations, .data.rel.ro for read-only data with some), so the
   variable keeps its flags and segment; only its neighbours change.
   GNU ld puts .data.* input sections into .data in input order; linking
   with -Wl,--sort-section=name sorts them by name, so the hot globals of
   every object end up next to each other, and the cold ones too.

   The name: the variable's assembler name, which is what GCC emits in the
   symbol table: a public variable's (mangled for C++) name, a file-scope
   static's plain name, a function-local static's NAME.N (the number GCC
   gives it in the unit).  Statics are local symbols: several units can
   have one of the same name, so a static matches only the profile's
   local symbol of that name whose file (the STT_FILE of its unit, the
   base name of the source file) is this unit's; a public variable only
   a global symbol.

   Left alone: variables with a section already (the user's
   __attribute__ ((section)) wins), thread-locals, common symbols,
   aliases, COMDAT data, compiler-made data (vtables, guard variables),
   register variables, variables in small-data sections, and those of an
   order the user asked to keep (no_reorder, -fno-toplevel-reorder).

   The sections are set when the IPA passes start
   (PLUGIN_ALL_IPA_PASSES_START): after the whole unit is parsed, before
   any variable is assembled (at -O0, where variables and functions are
   output in source order, too).  */

#include "gcc-plugin.h"

#include "tree.h"
#include "tree-pass.h"
#include "context.h"
#include "pass_manager.h"
#include "cgraph.h"
#include "output.h"
#include "stringpool.h"
#include "attribs.h"
#include "diagnostic-core.h"
#include "dumpfile.h"
#include "flags.h"
#include "options.h"

#include "feedback.h"

#include "../formats/feedback.h"

static struct
{
  double hot_density;      /* accesses per byte */
  unsigned long cold_size; /* bytes */
} options = { 1.0, 64 };

static const struct feedback *profile;
static bool remarks;
/* The profile's globals by name: indices into profile->globals.  */
static unsigned *by_name;
static unsigned placed_hot, placed_cold;

/* ---- Arguments ---- */

bool
globals_argument (const char *key, const char *value, bool *ok)
{
  char *end;
  if (strcmp (key, "global-hot-density") == 0)
    {
      *ok &= feedback_parse_number (key, value,
                                    "a number of accesses per byte, 0 or more",
                                    &options.hot_density);
      return true;
    }
  if (strcmp (key, "global-cold-size") == 0)
    {
      unsigned long size = value ? strtoul (value, &end, 10) : 0;
      if (value == NULL || *value < '0' || *value > '9' || *end != '\0')
        {
          error ("memprof: bad value %qs in "
                 "%<-fplugin-arg-memprof-global-cold-size%>: expected a "
                 "number of bytes",
                 value ? value : "");
          *ok = false;
        }
      else
        options.cold_size = size;
      return true;
    }
  return false;
}

/* ---- The profile's globals by name ---- */

static int
compare_names (const void *a, const void *b)
{
  const struct feedback_global *x = &profile->globals[*(const unsigned *) a];
  const struct feedback_global *y = &profile->globals[*(const unsigned *) b];
  int order = strcmp (feedback_string (profile, x->name),
                      feedback_string (profile, y->name));
  return order ? order : (x < y ? -1 : x > y);
}

/* The first entry of by_name named NAME.  */
static size_t
first_named (const char *name)
{
  size_t low = 0, high = profile->global_count;
  while (low < high)
    {
      size_t middle = (low + high) / 2;
      if (strcmp (
              feedback_string (profile, profile->globals[by_name[middle]].name),
              name)
          < 0)
        low = middle + 1;
      else
        high = middle;
    }
  return low;
}

/* The name the symbol table gives DECL: its assembler name, without the
   '*' of a name given with asm ("...").  */
static const char *
symbol_name (tree decl)
{
  const char *name = IDENTIFIER_POINTER (DECL_ASSEMBLER_NAME (decl));
  return name[0] == '*' ? name + 1 : name;
}

static const char *
base_name (const char *path)
{
  const char *slash = strrchr (path, '/');
  return slash ? slash + 1 : path;
}

/* DECL's entry in the profile, or NULL with the reason in *WHY.  */
static const struct feedback_global *
profile_entry (tree decl, const char **why)
{
  const char *name = symbol_name (decl);
  const char *unit = main_input_filename ? base_name (main_input_filename) : "";
  const struct feedback_global *found = NULL;
  unsigned candidates = 0;
  for (size_t i = first_named (name);
       i < profile->global_count
       && strcmp (feedback_string (profile, profile->globals[by_name[i]].name),
                  name)
              == 0;
       i++)
    {
      const struct feedback_global *global = &profile->globals[by_name[i]];
      /* A public variable is a global symbol, with no file; a static is a
         local symbol of its unit's file.  */
      bool matches
          = TREE_PUBLIC (decl)
                ? global->file == 0
                : global->file != 0
                      && strcmp (feedback_string (profile, global->file), unit)
                             == 0;
      if (matches)
        {
          found = global;
          candidates++;
        }
    }
  if (candidates == 0)
    *why = "not in the profile";
  else if (candidates > 1)
    *why = "ambiguous: several statics of that name in units of that file "
           "name";
  return candidates == 1 ? found : NULL;
}

/* ---- Placing ---- */

/* Why DECL must keep its section, or NULL.  */
static const char *
must_stay (varpool_node *node)
{
  tree decl = node->decl;
  if (node->alias || node->transparent_alias)
    return "an alias";
  if (node->in_other_partition || TREE_ASM_WRITTEN (decl))
    return "already output";
  if (DECL_SECTION_NAME (decl) != NULL)
    return "it has a section";
  if (DECL_THREAD_LOCAL_P (decl))
    return "thread-local";
  if (DECL_COMMON (decl))
    return "a common symbol";
  if (DECL_ONE_ONLY (decl) || DECL_COMDAT (decl))
    return "COMDAT data";
  if (DECL_ARTIFICIAL (decl))
    return "made by the compiler";
  if (DECL_HARD_REGISTER (decl))
    return "a register variable";
  if (lookup_attribute ("no_reorder", DECL_ATTRIBUTES (decl))
      || (global_options_set.x_flag_toplevel_reorder && !flag_toplevel_reorder))
    return "its order must be kept (no_reorder)";
  if (DECL_SIZE_UNIT (decl) == NULL_TREE
      || !tree_fits_uhwi_p (DECL_SIZE_UNIT (decl)))
    return "no constant size";
  return NULL;
}

/* The section family GCC would have put DECL in, or NULL when it is not
   one this placement handles (small data, thread-local).  */
static const char *
section_family (tree decl)
{
  switch (categorize_decl_for_section (decl, compute_reloc_for_var (decl)))
    {
    case SECCAT_BSS:
      return ".bss";
    case SECCAT_DATA:
    case SECCAT_DATA_REL:
    case SECCAT_DATA_REL_LOCAL:
      return ".data";
    case SECCAT_DATA_REL_RO:
    case SECCAT_DATA_REL_RO_LOCAL:
      return ".data.rel.ro";
    case SECCAT_RODATA:
    case SECCAT_RODATA_MERGE_STR:
    case SECCAT_RODATA_MERGE_STR_INIT:
    case SECCAT_RODATA_MERGE_CONST:
      return ".rodata";
    default:
      return NULL;
    }
}

/* Place DECL (NODE) by its profile entry; one line in DUMP (may be NULL)
   says what was done and why.  */
static void
place (varpool_node *node, FILE *dump)
{
  tree decl = node->decl;
  const char *why = must_stay (node);
  const char *name = symbol_name (decl);
  const struct feedback_global *global = NULL;
  if (why == NULL)
    global = profile_entry (decl, &why);
  unsigned HOST_WIDE_INT size
      = why == NULL ? tree_to_uhwi (DECL_SIZE_UNIT (decl)) : 0;
  if (global != NULL && global->size != size)
    why = "its size differs from the profile's (a stale profile?)";
  if (why != NULL)
    {
      if (dump)
        fprintf (dump, "memprof-globals: %s: %s: left alone\n", name, why);
      return;
    }

  double density = size ? (double) global->accesses / (double) size : 0;
  char figures[128];
  snprintf (figures, sizeof figures, "%lu bytes, %llu accesses, %.3g per byte",
            (unsigned long) size, (unsigned long long) global->accesses,
            density);
  const char *temperature = NULL;
  if (global->accesses == 0 && size >= options.cold_size)
    temperature = "cold";
  else if (global->accesses > 0 && density >= options.hot_density)
    temperature = "hot";
  const char *family = section_family (decl);
  if (temperature == NULL || family == NULL)
    {
      if (dump)
        fprintf (dump, "memprof-globals: %s: %s: %s: left alone\n", name,
                 figures,
                 temperature == NULL ? "neither hot nor cold"
                                     : "in a section GCC keeps for itself "
                                       "(small data)");
      return;
    }

  char *section = concat (
      family, strcmp (temperature, "hot") == 0 ? ".hot." : ".unlikely.", name,
      NULL);
  set_decl_section_name (decl, section);
  if (strcmp (temperature, "hot") == 0)
    placed_hot++;
  else
    placed_cold++;
  if (dump)
    fprintf (dump, "memprof-globals: %s: %s: %s: placed in %s\n", name, figures,
             temperature, section);
  if (remarks)
    inform (DECL_SOURCE_LOCATION (decl), "memprof: %qs: %s (%s): placed in %qs",
            name, temperature, figures, section);
  free (section);
}

/* When the IPA passes start: every variable of the unit is defined, none
   is assembled yet.  The lines go to the memprof pass's dump (opened
   here; the pass appends to it).  */
static void
place_globals (void *, void *)
{
  if (seen_error ())
    return;
  opt_pass *pass = g->get_passes ()->get_pass_by_name ("tree-memprof");
  FILE *dump = pass ? dump_begin (pass->static_pass_number, NULL) : NULL;
  bool accessed = false;
  for (size_t i = 0; i < profile->global_count && !accessed; i++)
    accessed = profile->globals[i].accesses > 0;
  if (profile->global_count == 0 || !accessed)
    {
      /* Placing on such a profile would call every variable cold.  */
      if (dump)
        fprintf (dump, "memprof-globals: %s: no variable placed\n",
                 profile->global_count == 0
                     ? "the profile has no globals (YAML, or profiles "
                       "without counts of globals, or merged without "
                       "--binary)"
                     : "the profile counts no access to any global (built "
                       "with globals=0?)");
    }
  else
    {
      varpool_node *node;
      FOR_EACH_DEFINED_VARIABLE (node)
      place (node, dump);
    }
  if (dump)
    dump_end (pass->static_pass_number, dump);
}

void
globals_start (const char *plugin_name, const struct feedback *loaded,
               bool with_remarks)
{
  profile = loaded;
  remarks = with_remarks;
  by_name = XNEWVEC (unsigned, profile->global_count + 1);
  for (size_t i = 0; i < profile->global_count; i++)
    by_name[i] = (unsigned) i;
  qsort (by_name, profile->global_count, sizeof *by_name, compare_names);
  register_callback (plugin_name, PLUGIN_ALL_IPA_PASSES_START, place_globals,
                     NULL);
}

void
globals_counts (unsigned *hot, unsigned *cold)
{
  *hot = placed_hot;
  *cold = placed_cold;
}
