/* Emitting the instrumentation (emit.cc): the runtime's declarations,
   the inline counter updates and hook calls, the start-up constructor.  */

#ifndef MEMPROF_PLUGIN_EMIT_H
#define MEMPROF_PLUGIN_EMIT_H

/* The trees emit.cc keeps across functions, for PLUGIN_REGISTER_GGC_ROOTS.  */
extern const struct ggc_root_tab emit_roots[];

/* An external variable NAME of TYPE that the runtime (or the program's
   link) defines: public, artificial, without debug information.  */
tree runtime_variable_decl (const char *name, tree type);

/* Declare the runtime's symbols (abi.h) once per compilation.  */
void build_runtime_decls (void);

/* base = __memprof_shadow_base, once, on the current function's entry
   edge: the SSA name every inline update of the function adds to.  */
tree load_shadow_base (void);

/* Insert the counting code for A before its statement.  BASE is the
   function's shadow-base SSA name (unused in callback mode).  The inline
   update adds COUNT (combine.cc: the accesses it stands for).  */
void instrument_access (const memory_access *a, tree base, unsigned count);

/* Append to SEQ the update that adds COUNT_VALUE (an SSA value, counted
   in a register over a loop: combine.cc) to the counter of A's address,
   or 0 to the counter of address 0 when COUNT_VALUE is 0.  */
void append_deferred_update (gimple_seq *seq, const memory_access *a, tree base,
                             tree count_value);

/* PLUGIN_ALL_PASSES_END, after a function is assembled: the globals its
   counting code made addressable are as the program left them, for the
   functions compiled next.  */
void restore_addressable (void *gcc_data, void *user_data);

/* PLUGIN_ALL_IPA_PASSES_START: a constructor that starts the runtime and
   checks that it implements this plugin's ABI (not in an LTRANS unit).  */
void add_module_constructor (void *gcc_data, void *user_data);

/* PLUGIN_ALL_IPA_PASSES_END: the same constructor in an LTRANS unit,
   lowered at once (IPA PTA must never meet it without a body).  */
void add_ltrans_module_constructor (void *gcc_data, void *user_data);

/* A declaration of the runtime function NAME of type FNTYPE (nothrow,
   leaf), with its assembler name fixed so that no front end mangles it.  */
tree runtime_function (const char *name, tree fntype);

/* The address of the first byte REF accesses, as GIMPLE in SEQ.  */
tree reference_address (tree ref, gimple_seq *seq);

#endif /* MEMPROF_PLUGIN_EMIT_H */
