/* Events for profiling modules (include/memprof/module.h,
   docs/modules.md): -fplugin-arg-memprof-events=LIST instruments exactly
   the events LIST names, and nothing else:

     load, store    a call __memprof_event_load/_store (address, size, id)
                    before each load or store that may reach the heap or
                    a global: the accesses the heap profile counts (the
                    same stack proof, stack_analysis.cc), a memcpy or
                    memset as one event of its length;
     memory         load and store;
     load-value, store-value
                    load, store, with the value loaded or stored (integers,
                    pointers, float and double, zero-extended to 64 bits;
                    0 for other types): __memprof_event_load_value(address,
                    size, id, value), after the load, before the store;
     function       __memprof_event_function_entry (id) on entry,
                    __memprof_event_function_exit (id) before each return;
     loop           __memprof_event_loop_entry (id) on the preheader,
                    __memprof_event_loop_iteration (id) at the top of the
                    header, __memprof_event_loop_exit (id) on each exit
                    edge;
     alloc, free, allocation
                    accepted: the runtime delivers these without
                    instrumentation;
     @FILE          the names in FILE (a module's specification file:
                    names separated by commas, spaces or lines; '#' to the
                    end of a line is a comment), or when FILE is an ELF
                    object (a module's .so), the names in its section
                    memprof_events (MEMPROF_MODULE_EVENTS).

   The id of an event is the address of a struct memprof_site (source
   file, function, line, column, kind) the pass defines, read only, in the
   section "memprof_sites" of the object: an id names its source position
   in the process with no table to look up.

   The pass runs just before the instrumentation pass ("memprof"), so it
   sees the accesses as that pass does, and that pass counts the same
   accesses as without events: the heap profile's counts do not change.  */

#include "gcc-plugin.h"

#include "tree.h"
#include "tree-pass.h"
#include "context.h"
#include "function.h"
#include "basic-block.h"
#include "cfgloop.h"
#include "tree-cfg.h"
#include "gimple.h"
#include "gimple-iterator.h"
#include "gimplify.h"
#include "gimplify-me.h"
#include "stor-layout.h"
#include "ssa.h"
#include "stringpool.h"
#include "cgraph.h"
#include "varasm.h"
#include "diagnostic-core.h"
#include "fold-const.h"
#include "tree-ssa-loop-ivopts.h"
#include "bitmap.h"
#include "dumpfile.h"
#include "output.h"

#include "memprof/module.h"
#include <elf.h>
#include "plugin.h"
#include "accesses.h"
#include "stack_analysis.h"
#include "emit.h"
#include "events.h"

enum
{
  ASK_LOAD = 1,
  ASK_STORE = 2,
  ASK_FUNCTION = 4,
  ASK_LOOP = 8,
  ASK_LOAD_VALUE = 16,
  ASK_STORE_VALUE = 32
};

/* What -fplugin-arg-memprof-events asked for (ASK_ bits).  */
static unsigned events_asked;
static bool events_given;

static GTY (()) tree site_type;
/* load, store, load with value, store with value */
static GTY (()) tree memory_event_decls[4];
static GTY (()) tree context_event_decls[5];

const struct ggc_root_tab events_roots[]
    = { { &site_type, 1, sizeof (tree), &gt_ggc_mx_tree_node,
          &gt_pch_nx_tree_node },
        { &memory_event_decls[0], 4, sizeof (tree), &gt_ggc_mx_tree_node,
          &gt_pch_nx_tree_node },
        { &context_event_decls[0], 5, sizeof (tree), &gt_ggc_mx_tree_node,
          &gt_pch_nx_tree_node },
        LAST_GGC_ROOT_TAB };

enum context_event
{
  FUNCTION_ENTRY,
  FUNCTION_EXIT,
  LOOP_ENTRY,
  LOOP_ITERATION,
  LOOP_EXIT
};

/* ---- The argument ---- */

static const char event_names_help[]
    = "load, store, memory, load-value, store-value, function, loop, "
      "alloc, free, allocation, @FILE";

/* Add the event NAME (LENGTH bytes) to events_asked; WHERE names the
   argument or the file and line for the error.  */
static bool
ask_event (const char *name, size_t length, const char *where)
{
  static const struct
  {
    const char *name;
    unsigned bits;
  } names[] = { { "load", ASK_LOAD },
                { "store", ASK_STORE },
                { "memory", ASK_LOAD | ASK_STORE },
                { "load-value", ASK_LOAD | ASK_LOAD_VALUE },
                { "store-value", ASK_STORE | ASK_STORE_VALUE },
                { "function", ASK_FUNCTION },
                { "loop", ASK_LOOP },
                { "alloc", 0 },
                { "free", 0 },
                { "allocation", 0 } };
  for (size_t i = 0; i < ARRAY_SIZE (names); i++)
    if (strlen (names[i].name) == length
        && strncmp (names[i].name, name, length) == 0)
      {
        events_asked |= names[i].bits;
        return true;
      }
  error ("memprof: unknown event %<%.*s%> in %s; the events are: %s",
         (int) length, name, where, event_names_help);
  return false;
}

/* Add every name of TEXT (separated by commas and white space; '#'
   starts a comment) to events_asked.  FILE names TEXT's file for the
   errors, or is null for the argument itself.  */
static bool
ask_events (const char *text, const char *file)
{
  bool ok = true;
  unsigned line = 1;
  const char *p = text;
  while (*p)
    {
      if (*p == '\n')
        line++;
      if (*p == '#')
        {
          while (*p && *p != '\n')
            p++;
          continue;
        }
      if (*p == ',' || ISSPACE (*p))
        {
          p++;
          continue;
        }
      size_t length = 0;
      while (p[length] && p[length] != ',' && !ISSPACE (p[length])
             && p[length] != '#')
        length++;
      char where[512];
      if (file)
        snprintf (where, sizeof where, "%s:%u", file, line);
      else
        snprintf (where, sizeof where, "%s", "-fplugin-arg-memprof-events");
      ok &= ask_event (p, length, where);
      p += length;
    }
  return ok;
}

/* TEXT (LENGTH bytes) is the ELF object FILE, a module: the events
   named in its section MEMPROF_EVENTS_SECTION (MEMPROF_MODULE_EVENTS).  */
static bool
ask_events_from_module (const char *text, size_t length, const char *file)
{
  const Elf64_Ehdr *header = (const Elf64_Ehdr *) text;
  if (length < sizeof *header || header->e_ident[EI_CLASS] != ELFCLASS64
      || header->e_shentsize != sizeof (Elf64_Shdr) || header->e_shoff > length
      || (length - header->e_shoff) / sizeof (Elf64_Shdr) < header->e_shnum
      || header->e_shstrndx >= header->e_shnum)
    {
      error ("memprof: %qs of %<-fplugin-arg-memprof-events=@%s%> is an ELF "
             "file but not a 64-bit one with section headers",
             file, file);
      return false;
    }
  const Elf64_Shdr *sections = (const Elf64_Shdr *) (text + header->e_shoff);
  const Elf64_Shdr *names = &sections[header->e_shstrndx];
  for (unsigned i = 0; i < header->e_shnum; i++)
    {
      const Elf64_Shdr *section = &sections[i];
      if (names->sh_offset > length || section->sh_name >= length
          || names->sh_offset + section->sh_name >= length
          || strncmp (text + names->sh_offset + section->sh_name,
                      MEMPROF_EVENTS_SECTION,
                      length - names->sh_offset - section->sh_name)
                 != 0
          || section->sh_type != SHT_PROGBITS)
        continue;
      if (section->sh_offset > length || section->sh_size == 0
          || section->sh_size > length - section->sh_offset
          || memchr (text + section->sh_offset, '\0', section->sh_size) == NULL)
        {
          error ("memprof: the section %qs of %qs is not a NUL-terminated "
                 "list of events",
                 MEMPROF_EVENTS_SECTION, file);
          return false;
        }
      char where[512];
      snprintf (where, sizeof where, "%s(section %s)", file,
                MEMPROF_EVENTS_SECTION);
      return ask_events (text + section->sh_offset, where);
    }
  error ("memprof: the module %qs has no section %qs: declare its events "
         "with %<MEMPROF_MODULE_EVENTS%> of %<memprof/module.h%>, or name "
         "its events file",
         file, MEMPROF_EVENTS_SECTION);
  return false;
}

static bool
ask_events_from_file (const char *file)
{
  FILE *stream = fopen (file, "r");
  if (stream == NULL)
    {
      error ("memprof: cannot read the events file %qs of "
             "%<-fplugin-arg-memprof-events=@%s%>: %m",
             file, file);
      return false;
    }
  char *text = NULL;
  size_t size = 0, length = 0;
  int c;
  while ((c = getc (stream)) != EOF)
    {
      if (length + 2 > size)
        {
          size = size ? 2 * size : 256;
          text = XRESIZEVEC (char, text, size);
        }
      text[length++] = (char) c;
    }
  fclose (stream);
  if (text == NULL)
    return true;
  text[length] = '\0';
  bool ok = length >= SELFMAG && memcmp (text, ELFMAG, SELFMAG) == 0
                ? ask_events_from_module (text, length, file)
                : ask_events (text, file);
  XDELETEVEC (text);
  return ok;
}

/* See events.h.  */
bool
events_argument (const char *key, const char *value, bool *ok)
{
  if (strcmp (key, "events") != 0)
    return false;
  events_given = true;
  if (value == NULL || *value == '\0')
    {
      error ("memprof: %<-fplugin-arg-memprof-events%> needs a list of "
             "events (%s), e.g. %<-fplugin-arg-memprof-events=load,store%>",
             event_names_help);
      *ok = false;
    }
  else if (value[0] == '@')
    *ok &= ask_events_from_file (value + 1);
  else
    *ok &= ask_events (value, NULL);
  return true;
}

/* See events.h.  */
bool
events_enabled (void)
{
  return events_asked != 0;
}

/* ---- The runtime's functions and the sites ---- */

static void
build_event_decls (void)
{
  if (site_type != NULL_TREE)
    return;
  tree memory_type = build_function_type_list (void_type_node, uint64_type_node,
                                               uint64_type_node,
                                               uint64_type_node, NULL_TREE);
  tree context_type
      = build_function_type_list (void_type_node, uint64_type_node, NULL_TREE);
  memory_event_decls[0]
      = runtime_function (MEMPROF_EVENT_LOAD_NAME, memory_type);
  memory_event_decls[1]
      = runtime_function (MEMPROF_EVENT_STORE_NAME, memory_type);
  tree value_type = build_function_type_list (
      void_type_node, uint64_type_node, uint64_type_node, uint64_type_node,
      uint64_type_node, NULL_TREE);
  memory_event_decls[2]
      = runtime_function (MEMPROF_EVENT_LOAD_VALUE_NAME, value_type);
  memory_event_decls[3]
      = runtime_function (MEMPROF_EVENT_STORE_VALUE_NAME, value_type);
  static const char *const context_names[]
      = { MEMPROF_EVENT_FUNCTION_ENTRY_NAME, MEMPROF_EVENT_FUNCTION_EXIT_NAME,
          MEMPROF_EVENT_LOOP_ENTRY_NAME, MEMPROF_EVENT_LOOP_ITERATION_NAME,
          MEMPROF_EVENT_LOOP_EXIT_NAME };
  for (int i = 0; i < 5; i++)
    context_event_decls[i] = runtime_function (context_names[i], context_type);

  /* struct memprof_site, as module.h has it.  */
  tree string_type = build_pointer_type (
      build_qualified_type (char_type_node, TYPE_QUAL_CONST));
  static const char *const field_names[]
      = { "file", "function", "line", "column", "kind", "number" };
  tree fields[6];
  site_type = make_node (RECORD_TYPE);
  for (int i = 0; i < 6; i++)
    {
      fields[i] = build_decl (BUILTINS_LOCATION, FIELD_DECL,
                              get_identifier (field_names[i]),
                              i < 2 ? string_type : uint32_type_node);
      DECL_CONTEXT (fields[i]) = site_type;
      /* finish_builtin_struct takes the fields last first.  */
      if (i > 0)
        DECL_CHAIN (fields[i]) = fields[i - 1];
    }
  finish_builtin_struct (site_type, "__memprof_site", fields[5], NULL_TREE);
}

static tree
string_constant (const char *text)
{
  return build_string_literal (strlen (text) + 1, text);
}

/* A new struct memprof_site for LOC in the current function, in the
   section memprof_sites; its address as a uint64_t: the id.  */
static tree
new_site (location_t loc, enum memprof_site_kind kind, unsigned number)
{
  static unsigned sites_made;
  expanded_location where = expand_location (loc);
  const char *function
      = IDENTIFIER_POINTER (DECL_ASSEMBLER_NAME (current_function_decl));
  vec<constructor_elt, va_gc> *values = NULL;
  tree field = TYPE_FIELDS (site_type);
  unsigned numbers[4] = { (unsigned) where.line, (unsigned) where.column,
                          (unsigned) kind, number };

  CONSTRUCTOR_APPEND_ELT (values, field,
                          string_constant (where.file ? where.file : ""));
  field = DECL_CHAIN (field);
  CONSTRUCTOR_APPEND_ELT (values, field, string_constant (function));
  for (int i = 0; i < 4; i++)
    {
      field = DECL_CHAIN (field);
      CONSTRUCTOR_APPEND_ELT (values, field,
                              build_int_cst (uint32_type_node, numbers[i]));
    }
  tree init = build_constructor (site_type, values);
  TREE_CONSTANT (init) = 1;
  TREE_STATIC (init) = 1;

  /* A local label, as ubsan's data: no symbol in the object.  */
  char name[32];
  ASM_GENERATE_INTERNAL_LABEL (name, "Lmemprof_site", sites_made++);
  tree decl = build_decl (UNKNOWN_LOCATION, VAR_DECL, get_identifier (name),
                          site_type);
  TREE_STATIC (decl) = 1;
  TREE_PUBLIC (decl) = 0;
  TREE_READONLY (decl) = 1;
  TREE_ADDRESSABLE (decl) = 1;
  DECL_ARTIFICIAL (decl) = 1;
  DECL_IGNORED_P (decl) = 1;
  DECL_EXTERNAL (decl) = 0;
  DECL_INITIAL (decl) = init;
  set_decl_section_name (decl, MEMPROF_SITES_SECTION);
  varpool_node::finalize_decl (decl);
  return fold_convert (uint64_type_node, build_fold_addr_expr (decl));
}

static gcall *
context_call (enum context_event event, tree site)
{
  gcall *call = gimple_build_call (context_event_decls[event], 1, site);
  gimple_set_location (call, DECL_SOURCE_LOCATION (current_function_decl));
  return call;
}

/* ---- Memory events ---- */

/* EXPR converted to TYPE, as a GIMPLE value whose statements are
   appended to SEQ (force_gimple_operand replaces its sequence).  */
static tree
append_value (tree type, tree expr, gimple_seq *seq)
{
  gimple_seq more = NULL;
  tree value = force_gimple_operand (fold_convert (type, unshare_expr (expr)),
                                     &more, true, NULL_TREE);
  gimple_seq_add_seq (seq, more);
  return value;
}

/* Bytes accessed by A, as a GIMPLE value in SEQ.  */
static tree
access_size (const memory_access *a, gimple_seq *seq)
{
  if (a->ref == NULL_TREE)
    return append_value (uint64_type_node, a->length, seq);
  HOST_WIDE_INT bytes = int_size_in_bytes (TREE_TYPE (a->ref));
  if (TREE_CODE (a->ref) == COMPONENT_REF
      && DECL_BIT_FIELD (TREE_OPERAND (a->ref, 1)))
    bytes = (tree_to_uhwi (DECL_SIZE (TREE_OPERAND (a->ref, 1))) + 7) / 8;
  return build_int_cst (uint64_type_node, bytes < 0 ? 0 : bytes);
}

static bool
is_load (const memory_access *a)
{
  return a->kind == ACCESS_LOAD || a->kind == ACCESS_RANGE_LOAD;
}

/* Would the heap profile count A?  The same filter as its pass: not
   provably stack, addressable.  Atomic and pointer accesses have no
   REF and no length: they are left out.  */
static bool
wants_event (const memory_access *a, bitmap *frame_uids)
{
  if (!(events_asked & (is_load (a) ? ASK_LOAD : ASK_STORE)))
    return false;
  if (a->ref == NULL_TREE && a->length == NULL_TREE)
    return false;
  if (stack_verdict (a->ref, a->address, plugin_options.stack_analysis,
                     frame_uids)
      != INSTRUMENT)
    return false;
  return a->ref == NULL_TREE
         || !may_be_nonaddressable_p (bit_field_container (a->ref));
}

/* The value A loads (after its statement) or stores (before it), when
   it is a scalar of at most 64 bits and values were asked for: the
   tree of it, else null.  */
static tree
access_value (const memory_access *a)
{
  gimple *stmt = a->stmt;
  tree value;
  if (a->ref == NULL_TREE || !gimple_assign_single_p (stmt))
    return NULL_TREE;
  if (a->kind == ACCESS_LOAD)
    {
      if (!(events_asked & ASK_LOAD_VALUE) || stmt_ends_bb_p (stmt))
        return NULL_TREE;
      value = gimple_assign_lhs (stmt);
      if (TREE_CODE (value) != SSA_NAME)
        return NULL_TREE;
    }
  else
    {
      if (!(events_asked & ASK_STORE_VALUE))
        return NULL_TREE;
      value = gimple_assign_rhs1 (stmt);
      if (!is_gimple_val (value))
        return NULL_TREE;
    }
  tree type = TREE_TYPE (value);
  if (INTEGRAL_TYPE_P (type) || POINTER_TYPE_P (type))
    return TYPE_PRECISION (type) <= 64 ? value : NULL_TREE;
  if (SCALAR_FLOAT_TYPE_P (type)
      && (TYPE_PRECISION (type) == 32 || TYPE_PRECISION (type) == 64))
    return build1 (VIEW_CONVERT_EXPR,
                   TYPE_PRECISION (type) == 32 ? uint32_type_node
                                               : uint64_type_node,
                   value);
  return NULL_TREE;
}

static void
add_memory_event (const memory_access *a)
{
  gimple_seq seq = NULL;
  location_t loc = gimple_location (a->stmt);
  gimple_stmt_iterator gsi = gsi_for_stmt (a->stmt);
  tree value = access_value (a);
  tree address = a->ref ? reference_address (a->ref, &seq) : a->address;
  address = append_value (uint64_type_node, address, &seq);
  tree size = access_size (a, &seq);
  tree site
      = new_site (loc, is_load (a) ? MEMPROF_SITE_LOAD : MEMPROF_SITE_STORE, 0);
  gcall *call;
  if (value != NULL_TREE)
    {
      value = append_value (uint64_type_node, value, &seq);
      call = gimple_build_call (memory_event_decls[is_load (a) ? 2 : 3], 4,
                                address, size, site, value);
    }
  else
    call = gimple_build_call (memory_event_decls[is_load (a) ? 0 : 1], 3,
                              address, size, site);
  gimple_set_location (call, loc);
  gimple_seq_add_stmt (&seq, call);
  /* A loaded value exists after its load.  */
  if (value != NULL_TREE && a->kind == ACCESS_LOAD)
    gsi_insert_seq_after (&gsi, seq, GSI_SAME_STMT);
  else
    gsi_insert_seq_before (&gsi, seq, GSI_SAME_STMT);
}

static unsigned
add_memory_events (void)
{
  auto_vec<memory_access> accesses;
  auto_vec<bool> wanted;
  struct access_counts counts;
  bitmap frame_uids = NULL;
  unsigned added = 0;

  memset (&counts, 0, sizeof counts);
  collect_accesses (&accesses, &counts);
  /* Decide everything before changing anything, as the pass after.  */
  for (const memory_access &a : accesses)
    wanted.safe_push (wants_event (&a, &frame_uids));
  if (frame_uids)
    BITMAP_FREE (frame_uids);
  for (unsigned i = 0; i < accesses.length (); i++)
    if (wanted[i])
      {
        add_memory_event (&accesses[i]);
        added++;
      }
  return added;
}

/* ---- Function events ---- */

static void
add_function_events (void)
{
  tree site = new_site (DECL_SOURCE_LOCATION (current_function_decl),
                        MEMPROF_SITE_FUNCTION, 0);
  basic_block bb;

  FOR_EACH_BB_FN (bb, cfun)
  {
    gimple_stmt_iterator gsi = gsi_last_bb (bb);
    if (gsi_end_p (gsi) || gimple_code (gsi_stmt (gsi)) != GIMPLE_RETURN)
      continue;
    /* The exit event goes between a tail call and the return: the
         call is no longer in tail position (tailc ran before us).  */
    gimple_stmt_iterator before = gsi;
    gsi_prev (&before);
    if (!gsi_end_p (before) && is_gimple_call (gsi_stmt (before))
        && !gimple_call_must_tail_p (as_a<gcall *> (gsi_stmt (before))))
      gimple_call_set_tail (as_a<gcall *> (gsi_stmt (before)), false);
    gsi_insert_before (&gsi, context_call (FUNCTION_EXIT, unshare_expr (site)),
                       GSI_SAME_STMT);
  }
  gsi_insert_on_edge_immediate (
      single_succ_edge (ENTRY_BLOCK_PTR_FOR_FN (cfun)),
      context_call (FUNCTION_ENTRY, site));
}

/* ---- Loop events ---- */

/* The source position of LOOP: the test of an exit (the `for' or
   `while' line), else its header's first statement that has one, else
   its function's.  */
static location_t
loop_location (class loop *loop)
{
  for (edge exit : get_loop_exit_edges (loop))
    {
      gimple *last = last_stmt (exit->src);
      if (last && gimple_code (last) == GIMPLE_COND
          && gimple_location (last) != UNKNOWN_LOCATION)
        return gimple_location (last);
    }
  for (gimple_stmt_iterator gsi = gsi_start_bb (loop->header); !gsi_end_p (gsi);
       gsi_next (&gsi))
    if (gimple_location (gsi_stmt (gsi)) != UNKNOWN_LOCATION)
      return gimple_location (gsi_stmt (gsi));
  return DECL_SOURCE_LOCATION (current_function_decl);
}

static unsigned
add_loop_events (void)
{
  unsigned added = 0;

  loop_optimizer_init (LOOPS_NORMAL | LOOPS_HAVE_RECORDED_EXITS);
  for (auto loop : loops_list (cfun, 0))
    {
      tree site = new_site (loop_location (loop), MEMPROF_SITE_LOOP, loop->num);
      gimple_stmt_iterator header = gsi_after_labels (loop->header);
      gsi_insert_before (&header,
                         context_call (LOOP_ITERATION, unshare_expr (site)),
                         GSI_SAME_STMT);
      gsi_insert_on_edge (loop_preheader_edge (loop),
                          context_call (LOOP_ENTRY, unshare_expr (site)));
      for (edge exit : get_loop_exit_edges (loop))
        if (!(exit->flags & (EDGE_ABNORMAL | EDGE_EH)))
          gsi_insert_on_edge (exit,
                              context_call (LOOP_EXIT, unshare_expr (site)));
      added++;
    }
  gsi_commit_edge_inserts ();
  loop_optimizer_finalize ();
  return added;
}

/* ---- The pass ---- */

static unsigned int
add_events (void)
{
  const char *name = IDENTIFIER_POINTER (DECL_NAME (current_function_decl));
  unsigned memory = 0, loops = 0;

  /* Not the runtime's functions, nor the start-up constructor emit.cc
     adds (the program did not write it).  */
  if (startswith (name, "__memprof_"))
    return 0;
  if (DECL_ARTIFICIAL (current_function_decl)
      && DECL_STATIC_CONSTRUCTOR (current_function_decl)
      && decl_init_priority_lookup (current_function_decl)
             == MAX_RESERVED_INIT_PRIORITY - 1)
    return 0;
  build_event_decls ();
  /* Memory first: the accesses are found as the optimisers left them.  */
  if (events_asked & (ASK_LOAD | ASK_STORE))
    memory = add_memory_events ();
  if (events_asked & ASK_LOOP)
    loops = add_loop_events ();
  if (events_asked & ASK_FUNCTION)
    add_function_events ();
  if (dump_file)
    fprintf (dump_file, ";; memprof-events: %s: %u memory events, %u loops%s\n",
             function_name (cfun), memory, loops,
             events_asked & ASK_FUNCTION ? ", function entry and exit" : "");
  return 0;
}

static const pass_data events_pass_data = {
  GIMPLE_PASS,
  "memprof_events",
  OPTGROUP_NONE,
  TV_NONE,
  PROP_ssa | PROP_cfg | PROP_gimple_leh,
  0,
  0,
  0,
  TODO_update_ssa | TODO_cleanup_cfg,
};

class events_pass : public gimple_opt_pass
{
public:
  events_pass (gcc::context *context)
      : gimple_opt_pass (events_pass_data, context)
  {
  }

  /* Only when events were asked for.  */
  bool
  gate (function *) final override
  {
    return events_enabled ();
  }

  unsigned int
  execute (function *) final override
  {
    return add_events ();
  }

  opt_pass *
  clone () final override
  {
    return new events_pass (m_ctxt);
  }
};

/* See events.h.  */
opt_pass *
make_events_pass (gcc::context *context)
{
  return new events_pass (context);
}
