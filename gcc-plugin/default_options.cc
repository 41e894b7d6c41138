/* -fplugin-arg-memprof-default-options=OPTIONS: embed a default
   MEMPROF_OPTIONS string in the program, as LLVM's
   -memprof-runtime-default-options does.

   Every translation unit compiled with it defines

       const char __memprof_default_options_str[] = "OPTIONS";

   weak (several units may define it; the linker keeps one) and with
   default visibility whatever -fvisibility says, so that the runtime,
   shared or static, finds it by name.  The runtime reads it at start-up,
   before the program's __memprof_default_options () and before
   MEMPROF_OPTIONS, which override it key by key
   (runtime/compiled_options.c).  The string is not checked here: the
   runtime reports a bad option in it, once, when the program starts.  */

#include "gcc-plugin.h"

#include "tree.h"
#include "stringpool.h"
#include "cgraph.h"
#include "varasm.h"
#include "diagnostic-core.h"
#include "opts.h"
#include "toplev.h"

#include "default_options.h"

/* The symbol the runtime reads (runtime/compiled_options.c).  */
#define DEFAULT_OPTIONS_SYMBOL "__memprof_default_options_str"

const char default_options_help[]
    = "  -fplugin-arg-memprof-default-options=OPTIONS\n"
      "                                           runtime options compiled "
      "into the program (MEMPROF_OPTIONS overrides them)\n";

static const char *default_options;

/* The value of the last -fplugin-arg-PLUGIN_NAME-default-options=VALUE on
   the command line, whole.  GCC's own split of a plugin argument
   (plugin.cc, parse_plugin_arg_opt) drops one character from the end of
   the value for every '=' after the first, and an options string is made
   of '='s; so the value is read again from the options GCC kept.  NULL
   when not found.  */
static const char *
whole_value (const char *plugin_name)
{
  const char *found = NULL;
  size_t name_length = strlen (plugin_name);
  static const char key[] = "-default-options=";

  for (unsigned i = 0; i < save_decoded_options_count; i++)
    {
      const struct cl_decoded_option *option = &save_decoded_options[i];
      const char *arg = option->arg;
      if (option->opt_index != OPT_fplugin_arg_ || arg == NULL
          || strncmp (arg, plugin_name, name_length) != 0
          || strncmp (arg + name_length, key, sizeof key - 1) != 0)
        continue;
      found = arg + name_length + sizeof key - 1;
    }
  return found;
}

/* Define the string in this unit.  Run when the unit starts (the
   front end's types exist, the symbol table still takes definitions);
   not in lto1, where the units already carry it.  */
static void
emit_default_options (void *gcc_data, void *user_data)
{
  (void) gcc_data;
  (void) user_data;
  if (in_lto_p)
    return;
  size_t length = strlen (default_options) + 1;
  tree type = build_array_type_nelts (
      build_qualified_type (char_type_node, TYPE_QUAL_CONST), length);
  tree name = get_identifier (DEFAULT_OPTIONS_SYMBOL);
  tree decl = build_decl (UNKNOWN_LOCATION, VAR_DECL, name, type);
  tree init = build_string (length, default_options);

  TREE_TYPE (init) = type;
  DECL_INITIAL (decl) = init;
  /* C and C++ alike name it as written (no C++ mangling).  */
  SET_DECL_ASSEMBLER_NAME (decl, name);
  TREE_STATIC (decl) = 1;
  TREE_PUBLIC (decl) = 1;
  TREE_READONLY (decl) = 1;
  TREE_USED (decl) = 1;
  DECL_ARTIFICIAL (decl) = 1;
  /* Kept although nothing in the unit refers to it.  */
  DECL_PRESERVE_P (decl) = 1;
  DECL_VISIBILITY (decl) = VISIBILITY_DEFAULT;
  DECL_VISIBILITY_SPECIFIED (decl) = 1;
  declare_weak (decl);
  varpool_node::finalize_decl (decl);
}

bool
default_options_argument (const char *plugin_name, const char *key,
                          const char *value, bool *ok)
{
  if (strcmp (key, "default-options") != 0)
    return false;
  if (value == NULL)
    {
      error (
          "memprof: %<-fplugin-arg-memprof-default-options%> needs the "
          "options: "
          "%<-fplugin-arg-memprof-default-options=print_text=1:verbosity=1%>");
      *ok = false;
      return true;
    }
  if (default_options == NULL)
    register_callback (plugin_name, PLUGIN_START_UNIT, emit_default_options,
                       NULL);
  /* The last one given wins, as for any option.  */
  default_options = whole_value (plugin_name);
  if (default_options == NULL)
    default_options = value;
  return true;
}
