/* Sampled access counting: bursty tracing (Hirzel and Chilimbi, after
   Arnold and Ryder), -fplugin-arg-memprof-sample-accesses[=RATE].

   A function with counted accesses gets two copies of its body: the
   plain copy (the original blocks, no counter update) and the counting
   copy (instrument.cc then counts its accesses only).  They are switched
   at checks, each a decrement of the thread's countdown
   __memprof_access_countdown (the runtime's initial-exec TLS variable,
   runtime/access_bursts.c), which runs down through a period: a gap
   (from BURST + GAP - 1 down to BURST), then a burst (from BURST - 1 down
   to 0); at -1 the next period starts (see check_kind):

     - at the function's entry: countdown -= 1; if it is below BURST (a
       burst, or the period's end), call __memprof_access_switch (BURST,
       GAP), which starts the next period at -1, and run the counting copy
       when it returns nonzero (in a burst); otherwise run the plain copy.
       Between bursts a call costs a decrement and a branch;
     - on the back edge of every loop that touches memory: in the plain
       copy the same check; in the counting copy its mirror (countdown -=
       1; if it is not in [0, BURST): the switch, then the plain copy's
       loop header, unless the switch says a burst has begun again).  A
       long loop thus enters and leaves bursts, and code that a call
       returned to in the wrong copy is in the right one after its next
       check.

   One check in RATE belongs to a burst (BURST checks of counting code,
   then GAP = BURST * (RATE - 1) checks of plain code), so every counted
   access adds RATE to its counter (instrument.cc, emit.cc): the counters
   hold estimates of the exact counts, and their sum over a profile is
   the number of accesses counted times RATE.

   Made in GCC 12 with the machinery of jump threading and loop copying:
   copy_bbs over the whole body (after a fresh entry block, with a copy of
   the loop tree so the copies' loops are loops), PHI arguments of the
   copied edges from add_phi_args_after_copy, the new edges' PHI
   arguments from the corresponding edge in the other copy, then
   update_ssa with the copies' definitions registered as new names of the
   originals (it places the PHIs where the copies meet: the loop headers
   that a switch enters).  The checks' conditions are placeholders until
   SSA is updated; their statements (a TLS load and store, a call) come
   after it, and their virtual operands with the pass's TODO_update_ssa.

   A function is left whole when it has abnormal edges (setjmp, non-local
   goto, computed goto: an interpreter's dispatch), cannot be copied, or
   has more than MAX_COPIED_BLOCKS blocks.  Its updates then run only in
   the thread's burst: each is behind its own test of the countdown
   (insert_in_bursts_only), and adds RATE.  */

#include "gcc-plugin.h"

#include "tree.h"
#include "tree-pass.h"
#include "context.h"
#include "function.h"
#include "basic-block.h"
#include "cfghooks.h"
#include "cfgloop.h"
#include "cfgloopmanip.h"
#include "gimple.h"
#include "gimple-iterator.h"
#include "ssa.h"
#include "tree-into-ssa.h"
#include "tree-cfg.h"
#include "stringpool.h"
#include "diagnostic-core.h"
#include "ggc.h"
#include "varasm.h"
#include "cgraph.h"
#include "dumpfile.h"

#include "memprof/abi.h"
#include "plugin.h"
#include "emit.h"
#include "combine.h"
#include "bursts.h"

/* The sampling rate (0: off) and the checks of a burst.  */
static unsigned sample_rate;
static unsigned burst_checks = 100;

/* A function with more blocks is left whole (its updates guarded):
   the copies double its code.  */
#define MAX_COPIED_BLOCKS 20000

#define DEFAULT_SAMPLE_RATE 100

const char bursts_help[]
    = "  -fplugin-arg-memprof-sample-accesses[=RATE]\n"
      "                                           count accesses in bursts "
      "of counting code, one check in RATE (default 100), each counted as "
      "RATE\n"
      "  -fplugin-arg-memprof-access-burst=N      checks (function entries, "
      "loop iterations) per burst (default 100)\n";

static GTY (()) tree countdown_decl;
static GTY (()) tree switch_decl;

const struct ggc_root_tab bursts_roots[]
    = { { &countdown_decl, 1, sizeof (tree), &gt_ggc_mx_tree_node,
          &gt_pch_nx_tree_node },
        { &switch_decl, 1, sizeof (tree), &gt_ggc_mx_tree_node,
          &gt_pch_nx_tree_node },
        LAST_GGC_ROOT_TAB };

/* ---- Options ---- */

static bool
parse_count (const char *key, const char *value, unsigned low, unsigned *result)
{
  char *end;
  unsigned long n = value ? strtoul (value, &end, 10) : 0;
  if (value == NULL || *value == '\0' || *end != '\0' || n < low
      || n > (1ul << 20))
    {
      error ("memprof: bad value %qs in %<-fplugin-arg-memprof-%s%>: "
             "expected a number from %u to %lu",
             value ? value : "", key, low, 1ul << 20);
      return false;
    }
  *result = (unsigned) n;
  return true;
}

/* See bursts.h.  */
bool
bursts_argument (const char *key, const char *value, bool *ok)
{
  if (strcmp (key, "sample-accesses") == 0)
    {
      if (value == NULL)
        sample_rate = DEFAULT_SAMPLE_RATE;
      else if (strcmp (value, "0") == 0)
        sample_rate = 0;
      else
        *ok &= parse_count (key, value, 2, &sample_rate);
      return true;
    }
  if (strcmp (key, "access-burst") == 0)
    {
      *ok &= parse_count (key, value, 1, &burst_checks);
      return true;
    }
  return false;
}

/* See bursts.h.  */
bool
bursts_check_options (void)
{
  if (sample_rate == 0)
    return true;
  if (plugin_options.histogram || plugin_options.callbacks)
    {
      error ("memprof: %<-fplugin-arg-memprof-sample-accesses%> cannot be "
             "combined with %<-fplugin-arg-memprof-%s%>: its counters add "
             "the rate at once; use one or the other",
             plugin_options.histogram ? "histogram" : "callbacks");
      return false;
    }
  if ((unsigned long) burst_checks * sample_rate > (1ul << 30))
    {
      error ("memprof: %<-fplugin-arg-memprof-access-burst=%u%> times "
             "%<-fplugin-arg-memprof-sample-accesses=%u%> is over 2^30 "
             "checks a period; use a smaller burst or rate",
             burst_checks, sample_rate);
      return false;
    }
  return true;
}

/* See bursts.h.  */
bool
access_sampling_enabled (void)
{
  return sample_rate != 0;
}

/* See bursts.h.  */
unsigned
access_weight (void)
{
  return sample_rate ? sample_rate : 1;
}

/* ---- The runtime's countdown and switch (abi.h) ---- */

static tree
thread_variable (const char *name)
{
  tree decl = runtime_variable_decl (name, long_unsigned_type_node);
  /* The runtime is loaded with the program (never dlopened), so its TLS
     is in the static block: one %fs-relative access.  */
  set_decl_tls_model (decl, TLS_MODEL_INITIAL_EXEC);
  return decl;
}

/* In code for an executable, the countdown is defined in the program
   (a weak zero in each unit: the linker keeps one, and a strong
   definition, the runtime's in a static link, wins; the shared
   runtime's reference resolves to the program's, as to any definition
   of the program): then each check reads it at a constant offset from %fs
   (local-exec) instead of loading that offset from the GOT first, a
   load and a register held through the function.  */
static void
define_in_executable (tree decl)
{
  if (flag_shlib)
    return;
  DECL_EXTERNAL (decl) = 0;
  DECL_INITIAL (decl) = build_zero_cst (TREE_TYPE (decl));
  DECL_WEAK (decl) = 1;
  set_decl_tls_model (decl, TLS_MODEL_LOCAL_EXEC);
  varpool_node::finalize_decl (decl);
}

/* See bursts.h.  */
tree
executable_thread_variable (const char *name)
{
  tree decl = thread_variable (name);
  define_in_executable (decl);
  return decl;
}

static void
build_burst_decls (void)
{
  if (countdown_decl != NULL_TREE)
    return;
  countdown_decl = thread_variable (MEMPROF_ACCESS_COUNTDOWN_NAME);
  define_in_executable (countdown_decl);
  switch_decl = runtime_function (
      MEMPROF_ACCESS_SWITCH_NAME,
      build_function_type_list (integer_type_node, long_integer_type_node,
                                long_integer_type_node, NULL_TREE));
}

/* ---- Deciding whether a function is copied ---- */

static bool
has_abnormal_edges (void)
{
  basic_block bb;
  FOR_EACH_BB_FN (bb, cfun)
  {
    edge e;
    edge_iterator ei;
    FOR_EACH_EDGE (e, ei, bb->succs)
    if (e->flags & EDGE_ABNORMAL)
      return true;
  }
  return false;
}

/* Has LOOP a statement for which PREDICATE holds?  */
static bool
loop_has (class loop *loop, bool (*predicate) (const gimple *))
{
  bool found = false;
  basic_block *body = get_loop_body (loop);
  for (unsigned i = 0; !found && i < loop->num_nodes; i++)
    for (gimple_stmt_iterator gsi = gsi_start_bb (body[i]);
         !found && !gsi_end_p (gsi); gsi_next (&gsi))
      found = predicate (gsi_stmt (gsi));
  free (body);
  return found;
}

/* A load, a store or a call: a loop of register arithmetic needs no
   check, nothing in it is counted.  */
static bool
touches_memory (const gimple *stmt)
{
  return gimple_vuse (stmt) != NULL_TREE;
}

static bool
is_call (const gimple *stmt)
{
  return is_gimple_call (stmt);
}

/* Can LOOP keep the countdown in a register: an innermost loop with no
   call, no asm and no irreducible region (nothing in it reads the
   thread's countdown), only normal exits, and a preheader?  Its checks then decrement a register,
   loaded on its entry and stored on its exits and around the switch:
   no store to memory an iteration.  */
static bool
loop_keeps_countdown (class loop *loop)
{
  if (loop->inner != NULL || !loop_preheader_edge (loop)
      || !loop_is_straight (loop))
    return false;
  auto_vec<edge> exits = get_loop_exit_edges (loop);
  for (edge e : exits)
    if (e->flags & EDGE_COMPLEX)
      return false;
  return true;
}

/* LOCAL = countdown on the loop's entry from PREHEADER; countdown = LOCAL
   on every exit of the loop HEADER heads (a switch's edge to the other
   copy included).  Needs dominators and fixed loops.  */
static void
keep_countdown_in (tree local, basic_block preheader, basic_block header)
{
  location_t loc = DECL_SOURCE_LOCATION (current_function_decl);
  gassign *load = gimple_build_assign (local, countdown_decl);
  gimple_set_location (load, loc);
  gsi_insert_on_edge (single_succ_edge (preheader), load);
  class loop *loop = header->loop_father;
  gcc_assert (loop->header == header);
  auto_vec<edge> exits = get_loop_exit_edges (loop);
  for (edge e : exits)
    {
      gassign *store = gimple_build_assign (countdown_decl, local);
      gimple_set_location (store, loc);
      gsi_insert_on_edge (e, store);
    }
}

/* ---- Building the checks ---- */

/* A placeholder condition, completed by complete_check once SSA is
   updated; its block ends in it.  */
static gcond *
add_placeholder_condition (basic_block bb)
{
  gcond *cond = gimple_build_cond (NE_EXPR, integer_zero_node,
                                   integer_zero_node, NULL_TREE, NULL_TREE);
  gimple_stmt_iterator gsi = gsi_last_bb (bb);
  gsi_insert_after (&gsi, cond, GSI_NEW_STMT);
  return cond;
}

/* BB's single successor edge becomes its false edge, of probability
   NOT_TAKEN.  */
static edge
make_false_edge (basic_block bb, profile_probability not_taken)
{
  edge e = single_succ_edge (bb);
  e->flags &= ~EDGE_FALLTHRU;
  e->flags |= EDGE_FALSE_VALUE;
  e->probability = not_taken;
  return e;
}

static void
add_true_edge (basic_block bb, basic_block dest, profile_probability taken)
{
  edge e = make_edge (bb, dest, EDGE_TRUE_VALUE);
  e->probability = taken;
}

/* What a check becomes once SSA is updated.  The countdown runs down
   through a period: a gap (from BURST + GAP - 1 down to BURST) then a
   burst (from BURST - 1 down to 0); at -1 the switch starts the next
   period.  Each copy's check leaves its copy (for the switch, which
   says where to go) when the countdown is out of its phase's range.  */
enum check_kind
{
  CHECK_PLAIN,    /* countdown -= 1; if ((long) countdown < BURST) */
  CHECK_COUNTING, /* countdown -= 1; if ((unsigned long) countdown >= BURST) */
  CHECK_SWITCH,   /* if (__memprof_access_switch (BURST, GAP) != 0) */
  CHECK_TICK,     /* countdown -= 1; if ((long) countdown < 0) */
  CHECK_PEEK      /* if ((unsigned long) countdown < BURST) */
};

struct check
{
  gcond *cond;
  enum check_kind kind;
  tree local; /* the loop's countdown in a register, or NULL_TREE */
};

static basic_block
new_block_after (basic_block after)
{
  basic_block bb = create_empty_bb (after);
  add_bb_to_loop (bb, after->loop_father);
  return bb;
}

/* The slow path of a check: a block after AFTER that calls the switch and
   goes to COUNTING in a burst, to PLAIN otherwise.  */
static basic_block
add_switch_block (basic_block after, basic_block counting, basic_block plain,
                  tree local, vec<struct check> *checks)
{
  basic_block slow = new_block_after (after);
  slow->count
      = after->count.apply_probability (profile_probability::very_unlikely ());
  struct check c = { add_placeholder_condition (slow), CHECK_SWITCH, local };
  checks->safe_push (c);
  make_edge (slow, plain, EDGE_FALSE_VALUE)->probability
      = profile_probability::even ();
  add_true_edge (slow, counting, profile_probability::even ());
  return slow;
}

/* At the entry: a plain check, whose slow path picks the copy.  FIRST
   and FIRST_COPY are the first blocks of the plain and counting copies;
   the edge from the entry block leads to FIRST.  PEEK: a function that
   calls no other (see calls_only_builtins) only reads the countdown and
   enters the counting copy in a burst: no store, so no chain through
   memory from one call's check to the next.  */
static void
add_entry_dispatch (basic_block first, basic_block first_copy, bool peek,
                    vec<struct check> *checks)
{
  basic_block countdown
      = split_edge (single_succ_edge (ENTRY_BLOCK_PTR_FOR_FN (cfun)));
  struct check c = { add_placeholder_condition (countdown),
                     peek ? CHECK_PEEK : CHECK_PLAIN, NULL_TREE };
  checks->safe_push (c);
  if (peek)
    {
      profile_probability in_burst
          = profile_probability::always ().apply_scale (1, sample_rate);
      make_false_edge (countdown, in_burst.invert ());
      add_true_edge (countdown, first_copy, in_burst);
      return;
    }
  make_false_edge (countdown, profile_probability::very_likely ());
  basic_block slow
      = add_switch_block (countdown, first_copy, first, NULL_TREE, checks);
  add_true_edge (countdown, slow, profile_probability::very_unlikely ());
}

/* Does the function call only builtins (the C library's string and
   memory functions, which call no instrumented code)?  Then a call of it
   need not advance the countdown: the calls and loops around it do, and
   its own loops have their checks.  Its accesses are counted when the
   thread is in a burst, as any other code's.  */
static bool
calls_only_builtins (void)
{
  basic_block bb;
  FOR_EACH_BB_FN (bb, cfun)
  for (gimple_stmt_iterator gsi = gsi_start_bb (bb); !gsi_end_p (gsi);
       gsi_next (&gsi))
    {
      gimple *stmt = gsi_stmt (gsi);
      if (is_gimple_call (stmt) && !gimple_call_internal_p (stmt)
          && !gimple_call_builtin_p (stmt, BUILT_IN_NORMAL))
        return false;
    }
  return true;
}

/* On the latch edge LATCH -> HEADER of a loop of one copy: countdown, and
   on its expiry the switch, which stays (through the latch) or enters
   OTHER_HEADER, the same loop's header in the other copy.  COUNTING: is
   this loop in the counting copy?  */
static void
add_back_edge_check (basic_block latch, basic_block header,
                     basic_block other_header, bool counting, tree local,
                     vec<struct check> *checks)
{
  edge latch_edge = find_edge (latch, header);
  basic_block check = split_edge (latch_edge);
  basic_block new_latch = split_edge (single_succ_edge (check));
  edge stay = single_succ_edge (new_latch);

  struct check c = { add_placeholder_condition (check),
                     counting ? CHECK_COUNTING : CHECK_PLAIN, local };
  checks->safe_push (c);
  make_false_edge (check, profile_probability::very_likely ());
  basic_block slow
      = counting
            ? add_switch_block (check, new_latch, other_header, local, checks)
            : add_switch_block (check, other_header, new_latch, local, checks);
  add_true_edge (check, slow, profile_probability::very_unlikely ());

  /* The other header's PHIs on the new edge: the values this copy's
     latch passes its own header, in the original names (update_ssa
     renames them); the copies' PHIs are in the same order.  */
  edge enter = find_edge (slow, other_header);
  gphi_iterator own = gsi_start_phis (header);
  for (gphi_iterator other = gsi_start_phis (other_header); !gsi_end_p (other);
       gsi_next (&other), gsi_next (&own))
    {
      gphi *own_phi = own.phi ();
      add_phi_arg (other.phi (), PHI_ARG_DEF_FROM_EDGE (own_phi, stay), enter,
                   gimple_phi_arg_location_from_edge (own_phi, stay));
    }
}

/* An operand of an asm statement: CONSTRAINT and VALUE.  */
static tree
asm_operand (const char *constraint, tree value)
{
  return build_tree_list (
      build_tree_list (NULL_TREE,
                       build_string (strlen (constraint) + 1, constraint)),
      value);
}

/* LHS = the switch, called from an asm statement that GCC sees as no
   call: it keeps every register but %rax and the flags (the runtime's
   __memprof_access_switch_preserving saves the rest), so a check's cold
   path does not make a leaf a caller, nor move a loop's values into
   callee-saved registers and a prologue the plain copy would pay on
   every call (measured: d_number of libiberty's demangler saved 5
   registers more than at -O2).  The stack goes below the red zone, which
   a leaf may use, around the call; "memory": the switch reads and writes
   the countdown.  The call goes through the GOT, bound at load time: a
   PLT's lazy binding (a program linked without -z now) would clobber
   %r10 and %r11 on the first call (found by make check-torture-bursts).  */
static gimple *
preserving_switch (tree lhs)
{
  vec<tree, va_gc> *inputs = NULL, *outputs = NULL, *clobbers = NULL;
  vec_safe_push (outputs, asm_operand ("=a", lhs));
  vec_safe_push (
      inputs,
      asm_operand ("D", build_int_cst (long_integer_type_node, burst_checks)));
  vec_safe_push (inputs,
                 asm_operand ("S", build_int_cst (long_integer_type_node,
                                                  (HOST_WIDE_INT) burst_checks
                                                      * (sample_rate - 1))));
  vec_safe_push (clobbers,
                 build_tree_list (NULL_TREE, build_string (7, "memory")));
  vec_safe_push (clobbers, build_tree_list (NULL_TREE, build_string (3, "cc")));
  gasm *g = gimple_build_asm_vec (
      "lea -128(%%rsp), %%rsp\n\tcall *" MEMPROF_ACCESS_SWITCH_PRESERVING_NAME
      "@GOTPCREL(%%rip)\n\tlea 128(%%rsp), %%rsp",
      inputs, outputs, clobbers, NULL);
  gimple_asm_set_volatile (g, true);
  SSA_NAME_DEF_STMT (lhs) = g;
  return g;
}

/* A check's statements, before its condition.  */
static void
complete_check (const struct check *c)
{
  gimple_stmt_iterator gsi = gsi_for_stmt (c->cond);
  location_t loc = DECL_SOURCE_LOCATION (current_function_decl);
  tree lhs = NULL_TREE;
  gimple *g;

  switch (c->kind)
    {
    case CHECK_PEEK:
      lhs = make_ssa_name (long_unsigned_type_node);
      g = gimple_build_assign (lhs, countdown_decl);
      gimple_set_location (g, loc);
      gsi_insert_before (&gsi, g, GSI_SAME_STMT);
      gimple_cond_set_code (c->cond, LT_EXPR);
      gimple_cond_set_rhs (
          c->cond, build_int_cst (long_unsigned_type_node, burst_checks));
      break;
    case CHECK_PLAIN:
    case CHECK_COUNTING:
    case CHECK_TICK:
      {
        tree new_value;
        if (c->local != NULL_TREE)
          {
            /* local -= 1, then a copy the condition reads: the local is
               put in SSA form by the pass's TODO_update_ssa.  */
            g = gimple_build_assign (
                c->local, PLUS_EXPR, c->local,
                build_all_ones_cst (long_unsigned_type_node));
            gimple_set_location (g, loc);
            gsi_insert_before (&gsi, g, GSI_SAME_STMT);
            new_value = make_ssa_name (long_unsigned_type_node);
            g = gimple_build_assign (new_value, c->local);
          }
        else
          {
            tree old_value = make_ssa_name (long_unsigned_type_node);
            g = gimple_build_assign (old_value, countdown_decl);
            gimple_set_location (g, loc);
            gsi_insert_before (&gsi, g, GSI_SAME_STMT);
            new_value = make_ssa_name (long_unsigned_type_node);
            g = gimple_build_assign (
                new_value, PLUS_EXPR, old_value,
                build_all_ones_cst (long_unsigned_type_node));
            gimple_set_location (g, loc);
            gsi_insert_before (&gsi, g, GSI_SAME_STMT);
            g = gimple_build_assign (countdown_decl, new_value);
          }
        gimple_set_location (g, loc);
        gsi_insert_before (&gsi, g, GSI_SAME_STMT);
        tree burst = build_int_cst (long_unsigned_type_node,
                                    c->kind == CHECK_TICK ? 0 : burst_checks);
        if (c->kind != CHECK_COUNTING)
          {
            lhs = make_ssa_name (long_integer_type_node);
            g = gimple_build_assign (lhs, NOP_EXPR, new_value);
            gimple_set_location (g, loc);
            gsi_insert_before (&gsi, g, GSI_SAME_STMT);
            gimple_cond_set_code (c->cond, LT_EXPR);
            burst = fold_convert (long_integer_type_node, burst);
          }
        else
          {
            lhs = new_value;
            gimple_cond_set_code (c->cond, GE_EXPR);
          }
        gimple_cond_set_rhs (c->cond, burst);
        break;
      }
    case CHECK_SWITCH:
      /* The loop's countdown to the thread's for the switch, and back.  */
      if (c->local != NULL_TREE)
        {
          g = gimple_build_assign (countdown_decl, c->local);
          gimple_set_location (g, loc);
          gsi_insert_before (&gsi, g, GSI_SAME_STMT);
        }
      lhs = make_ssa_name (integer_type_node);
      g = preserving_switch (lhs);
      gimple_set_location (g, loc);
      gsi_insert_before (&gsi, g, GSI_SAME_STMT);
      if (c->local != NULL_TREE)
        {
          g = gimple_build_assign (c->local, countdown_decl);
          gimple_set_location (g, loc);
          gsi_insert_before (&gsi, g, GSI_SAME_STMT);
        }
      gimple_cond_set_rhs (c->cond, build_zero_cst (integer_type_node));
      break;
    }
  gimple_cond_set_lhs (c->cond, lhs);
  update_stmt (c->cond);
}

/* ---- Copying ---- */

/* Why FUNCTION is left whole, or NULL.  */
static const char *
reason_to_leave_whole (void)
{
  if (cfun->calls_setjmp || cfun->has_nonlocal_label || has_abnormal_edges ())
    return "abnormal edges (setjmp, non-local or computed goto)";
  if (n_basic_blocks_for_fn (cfun) - NUM_FIXED_BLOCKS > MAX_COPIED_BLOCKS)
    return "too many blocks";
  if (!single_succ_p (ENTRY_BLOCK_PTR_FOR_FN (cfun)))
    return "an entry block with several successors";
  return NULL;
}

/* The mark of the counting copy's statements: a pass-local flag that
   no other part of this pass uses (update_ssa does, so the marks are set
   after it).  */
#define COUNTING_COPY GF_PLF_1

static void
mark_statements (basic_block bb, bool counting)
{
  for (gimple_stmt_iterator gsi = gsi_start_bb (bb); !gsi_end_p (gsi);
       gsi_next (&gsi))
    gimple_set_plf (gsi_stmt (gsi), COUNTING_COPY, counting);
}

/* See bursts.h.  */
bool
in_counting_copy (gimple *stmt)
{
  return gimple_plf (stmt, COUNTING_COPY);
}

/* See bursts.h.  */
bool
make_burst_copies (void)
{
  const char *reason = reason_to_leave_whole ();
  if (reason == NULL)
    {
      auto_vec<basic_block> blocks;
      basic_block bb;
      FOR_EACH_BB_FN (bb, cfun)
      blocks.safe_push (bb);
      if (!can_copy_bbs_p (blocks.address (), blocks.length ()))
        reason = "a block that cannot be copied";
    }
  if (reason != NULL)
    {
      if (dump_file)
        fprintf (dump_file,
                 ";; memprof: sample-accesses: %s left whole, counted in "
                 "bursts only: %s\n",
                 function_name (cfun), reason);
      return false;
    }
  build_burst_decls ();
  bool peek = calls_only_builtins ();

  /* Simple latches: one latch edge a loop, from an empty block.  */
  loop_optimizer_init (LOOPS_HAVE_SIMPLE_LATCHES | LOOPS_HAVE_PREHEADERS);
  /* The loops that get checks, as (latch, header), in the original, and
     for those that keep the countdown in a register, their preheader and
     register.  */
  auto_vec<basic_block> latches, headers, preheaders;
  auto_vec<tree> locals;
  for (class loop *loop : loops_list (cfun, 0))
    if (loop->latch != NULL && loop_has (loop, touches_memory))
      {
        latches.safe_push (loop->latch);
        headers.safe_push (loop->header);
        bool keeps = loop_keeps_countdown (loop);
        preheaders.safe_push (keeps ? loop_preheader_edge (loop)->src : NULL);
        locals.safe_push (keeps ? create_tmp_reg (long_unsigned_type_node,
                                                  "memprof_countdown")
                                : NULL_TREE);
      }

  free_dominance_info (CDI_DOMINATORS);
  /* A fresh first block, without PHIs: both copies start with one.  */
  basic_block first
      = split_edge (single_succ_edge (ENTRY_BLOCK_PTR_FOR_FN (cfun)));

  auto_vec<basic_block> blocks;
  basic_block bb;
  FOR_EACH_BB_FN (bb, cfun)
  blocks.safe_push (bb);
  unsigned n = blocks.length ();

  initialize_original_copy_tables ();
  class loop *root = current_loops->tree_root;
  auto_vec<class loop *> outermost;
  for (class loop *loop = root->inner; loop; loop = loop->next)
    outermost.safe_push (loop);
  for (class loop *loop : outermost)
    duplicate_subloops (loop, duplicate_loop (loop, root));

  basic_block *copies = XNEWVEC (basic_block, n);
  copy_bbs (blocks.address (), n, copies, NULL, 0, NULL, root,
            EXIT_BLOCK_PTR_FOR_FN (cfun)->prev_bb, false);
  add_phi_args_after_copy (copies, n, NULL);

  /* The counting copy runs one check in RATE.  */
  scale_bbs_frequencies (
      copies, n, profile_probability::always ().apply_scale (1, sample_rate));

  auto_vec<struct check> checks;
  auto_vec<basic_block> preheader_copies, header_copies;
  for (unsigned i = 0; i < latches.length (); i++)
    {
      basic_block latch_copy = get_bb_copy (latches[i]);
      basic_block header_copy = get_bb_copy (headers[i]);
      add_back_edge_check (latches[i], headers[i], header_copy, false,
                           locals[i], &checks);
      add_back_edge_check (latch_copy, header_copy, headers[i], true, locals[i],
                           &checks);
      if (preheaders[i] != NULL)
        {
          preheader_copies.safe_push (get_bb_copy (preheaders[i]));
          header_copies.safe_push (header_copy);
        }
    }
  add_entry_dispatch (first, get_bb_copy (first), peek, &checks);
  free_original_copy_tables ();

  /* The copies' definitions are new names of the originals: update_ssa
     rewrites the copies' uses and joins the names where the copies meet
     (PHIs at the loop headers a switch enters).  */
  update_ssa (TODO_update_ssa);
  /* (update_ssa uses the flag itself.)  */
  for (unsigned i = 0; i < n; i++)
    {
      mark_statements (blocks[i], false);
      mark_statements (copies[i], true);
    }
  free (copies);
  for (const struct check &c : checks)
    complete_check (&c);

  loops_state_set (LOOPS_NEED_FIXUP);
  loop_optimizer_init (LOOPS_MAY_HAVE_MULTIPLE_LATCHES);
  /* After the marks: these statements are neither copy's accesses.  */
  unsigned kept = 0;
  for (unsigned i = 0; i < latches.length (); i++)
    if (preheaders[i] != NULL)
      {
        keep_countdown_in (locals[i], preheaders[i], headers[i]);
        keep_countdown_in (locals[i], preheader_copies[kept],
                           header_copies[kept]);
        kept++;
      }
  gsi_commit_edge_inserts ();
  loop_optimizer_finalize ();
  free_dominance_info (CDI_DOMINATORS);
  if (dump_file)
    fprintf (dump_file,
             ";; memprof: sample-accesses: %s copied (%u blocks), %u loop "
             "check(s) a copy (%u in a register), one access in %u counted "
             "as %u%s\n",
             function_name (cfun), n, latches.length (), kept, sample_rate,
             sample_rate, peek ? ", the entry's check only reads" : "");
  return true;
}

/* See bursts.h.  */
void
load_shadow_base_where_used (tree base)
{
  gimple *def = SSA_NAME_DEF_STMT (base);
  tree decl = gimple_assign_rhs1 (def);
  auto_vec<tree> loaded;
  loaded.safe_grow_cleared (last_basic_block_for_fn (cfun));
  imm_use_iterator iter;
  gimple *use;
  FOR_EACH_IMM_USE_STMT (use, iter, base)
  {
    if (is_gimple_debug (use))
      {
        gimple_debug_bind_reset_value (use);
        update_stmt (use);
        continue;
      }
    if (gimple_code (use) == GIMPLE_PHI)
      continue;
    basic_block bb = gimple_bb (use);
    if (loaded[bb->index] == NULL_TREE)
      {
        loaded[bb->index] = make_ssa_name (TREE_TYPE (base));
        gassign *load = gimple_build_assign (loaded[bb->index], decl);
        gimple_set_location (load, gimple_location (def));
        gimple_stmt_iterator gsi = gsi_after_labels (bb);
        gsi_insert_before (&gsi, load, GSI_SAME_STMT);
      }
    use_operand_p use_p;
    FOR_EACH_IMM_USE_ON_STMT (use_p, iter)
    SET_USE (use_p, loaded[bb->index]);
    update_stmt (use);
  }
  if (has_zero_uses (base))
    {
      gimple_stmt_iterator gsi = gsi_for_stmt (def);
      gsi_remove (&gsi, true);
      release_ssa_name (base);
    }
}

/* ---- Ticks: time in functions without a copy ---- */

/* On LATCH_EDGE: countdown -= 1, and at the period's end the switch
   (whose answer the loop, having one copy, does not need).  */
static void
add_tick (edge latch_edge, vec<struct check> *checks)
{
  basic_block check = split_edge (latch_edge);
  basic_block new_latch = split_edge (single_succ_edge (check));
  struct check c = { add_placeholder_condition (check), CHECK_TICK, NULL_TREE };
  checks->safe_push (c);
  make_false_edge (check, profile_probability::very_likely ());
  basic_block slow = new_block_after (check);
  slow->count
      = check->count.apply_probability (profile_probability::very_unlikely ());
  gcall *call = gimple_build_call (
      switch_decl, 2, build_int_cst (long_integer_type_node, burst_checks),
      build_int_cst (long_integer_type_node,
                     (HOST_WIDE_INT) burst_checks * (sample_rate - 1)));
  gimple_set_location (call, DECL_SOURCE_LOCATION (current_function_decl));
  gimple_stmt_iterator gsi = gsi_start_bb (slow);
  gsi_insert_after (&gsi, call, GSI_NEW_STMT);
  make_single_succ_edge (slow, new_latch, EDGE_FALLTHRU);
  add_true_edge (check, slow, profile_probability::very_unlikely ());
}

/* See bursts.h.  */
void
add_ticks (void)
{
  if (cfun->calls_setjmp || cfun->has_nonlocal_label || has_abnormal_edges ()
      || number_of_loops (cfun) <= 1)
    return;
  build_burst_decls ();
  loop_optimizer_init (LOOPS_HAVE_SIMPLE_LATCHES | LOOPS_HAVE_PREHEADERS);
  auto_vec<edge> latch_edges;
  for (class loop *loop : loops_list (cfun, 0))
    if (loop->latch != NULL && loop_has (loop, is_call))
      latch_edges.safe_push (loop_latch_edge (loop));
  free_dominance_info (CDI_DOMINATORS);
  auto_vec<struct check> checks;
  for (edge e : latch_edges)
    add_tick (e, &checks);
  for (const struct check &c : checks)
    complete_check (&c);
  loops_state_set (LOOPS_NEED_FIXUP);
  loop_optimizer_init (LOOPS_MAY_HAVE_MULTIPLE_LATCHES);
  loop_optimizer_finalize ();
  free_dominance_info (CDI_DOMINATORS);
  if (dump_file && !latch_edges.is_empty ())
    fprintf (dump_file,
             ";; memprof: sample-accesses: %s not copied, %u loop tick(s)\n",
             function_name (cfun), latch_edges.length ());
}

/* ---- Functions left whole: updates in bursts only ---- */

/* Is the function being instrumented left whole under sampling?  */
static bool guarded_updates;

/* Its updates, in statement order, until guard_updates (false) inserts
   them: an update (SEQ) for the access STMT.  */
struct pending_update
{
  gimple *stmt;
  gimple_seq seq;
};
static vec<pending_update> pending_updates;

static void insert_guarded (gimple *stmt, gimple_seq seq);

/* Are FROM and TO in one block, FROM first, with no call and no asm from
   FROM up to TO (TO excluded)?  Then the countdown cannot change between
   them, nor a block be freed: their updates can share one test, before
   TO.  */
static bool
one_stretch (gimple *from, gimple *to)
{
  if (gimple_bb (from) != gimple_bb (to))
    return false;
  for (gimple_stmt_iterator gsi = gsi_for_stmt (from); !gsi_end_p (gsi);
       gsi_next (&gsi))
    {
      gimple *stmt = gsi_stmt (gsi);
      if (stmt == to)
        return true;
      if (is_gimple_call (stmt) || gimple_code (stmt) == GIMPLE_ASM)
        return false;
    }
  return false;
}

/* Insert the pending updates: one test of the countdown for each stretch
   of a block without calls (an interpreter's dispatch, left whole, has
   several updates an instruction: lua's luaV_execute).  */
static void
insert_pending_updates (void)
{
  unsigned n = pending_updates.length (), tests = 0;
  for (unsigned i = 0; i < n;)
    {
      gimple_seq seq = pending_updates[i].seq;
      unsigned last = i;
      while (last + 1 < n
             && one_stretch (pending_updates[i].stmt,
                             pending_updates[last + 1].stmt))
        gimple_seq_add_seq (&seq, pending_updates[++last].seq);
      insert_guarded (pending_updates[last].stmt, seq);
      i = last + 1;
      tests++;
    }
  if (dump_file && n > 0)
    fprintf (dump_file,
             ";; memprof: sample-accesses: %u update(s) in bursts only, "
             "under %u test(s) of the countdown\n",
             n, tests);
  pending_updates.release ();
}

/* See bursts.h.  */
void
guard_updates (bool guarded)
{
  if (guarded_updates && !guarded)
    insert_pending_updates ();
  guarded_updates = guarded;
  if (guarded)
    build_burst_decls ();
}

/* See bursts.h.  */
bool
updates_guarded (void)
{
  return guarded_updates;
}

/* See bursts.h.  */
void
insert_in_bursts_only (gimple *stmt, gimple_seq seq)
{
  struct pending_update update = { stmt, seq };
  pending_updates.safe_push (update);
}

/* See bursts.h.  */
basic_block
insert_in_block_of_its_own (gimple *stmt, gimple_seq seq, basic_block *update,
                            basic_block *rest)
{
  basic_block block = gimple_bb (stmt);
  gimple_stmt_iterator gsi = gsi_for_stmt (stmt);
  gsi_prev (&gsi);
  edge on = gsi_end_p (gsi) ? split_block_after_labels (block)
                            : split_block (block, gsi_stmt (gsi));
  *rest = on->dest;
  *update = split_edge (on);
  gimple_stmt_iterator at = gsi_start_bb (*update);
  gsi_insert_seq_after (&at, seq, GSI_NEW_STMT);
  return block;
}

/* Insert SEQ before STMT, in a block of its own that runs in a burst.  */
static void
insert_guarded (gimple *stmt, gimple_seq seq)
{
  basic_block update, rest;
  basic_block block = insert_in_block_of_its_own (stmt, seq, &update, &rest);

  /* In BLOCK: if ((unsigned long) countdown < BURST), the burst.  */
  location_t loc = gimple_location (stmt);
  tree countdown = make_ssa_name (long_unsigned_type_node);
  gassign *load = gimple_build_assign (countdown, countdown_decl);
  gimple_set_location (load, loc);
  gimple_stmt_iterator end = gsi_last_bb (block);
  gsi_insert_after (&end, load, GSI_NEW_STMT);
  gcond *cond = gimple_build_cond (
      LT_EXPR, countdown, build_int_cst (long_unsigned_type_node, burst_checks),
      NULL_TREE, NULL_TREE);
  gimple_set_location (cond, loc);
  gsi_insert_after (&end, cond, GSI_NEW_STMT);
  profile_probability in_burst
      = profile_probability::always ().apply_scale (1, sample_rate);
  edge taken = single_succ_edge (block);
  taken->flags &= ~EDGE_FALLTHRU;
  taken->flags |= EDGE_TRUE_VALUE;
  taken->probability = in_burst;
  update->count = block->count.apply_probability (in_burst);
  make_edge (block, rest, EDGE_FALSE_VALUE)->probability = in_burst.invert ();
  free_dominance_info (CDI_DOMINATORS);
}
