/* Combining counter updates: one update that adds N where N instrumented
   accesses provably hit the same counter, so that the totals stay exact
   and the program runs fewer updates.

   A counter covers one granule (abi.h: MEMPROF_GRANULE_SIZE bytes), and
   an access counts at the granule of its first byte.  Two accesses of a
   basic block are combined when both hold:

   1. Same counter.  Their addresses are X + D1 and X + D2, where X is
      the same value at both (the same SSA pointer, the same declaration,
      the same variable offset and index: SSA names never change between
      two statements) and D1, D2 are constants; and X is known to be
      M modulo A (GCC's facts about the pointer: its alignment proven by
      CCP from malloc, from a declaration, from masking; never the
      alignment the access's type merely promises), A a power of two of
      at most a granule.  Then the first bytes are in the same granule
      when M + D1 and M + D2 fall in the same A-byte chunk: a chunk never
      straddles two granules.  With nothing known (A = 1) that is the
      same address: a read-modify-write `p->n++', a field read twice.

   2. Both execute, or neither.  No call and no inline asm lies between
      them in the block (a call may not return -- exit, longjmp, a throw
      -- or may free the block or dump the profile), nor a statement that
      may throw before the second (-fnon-call-exceptions: a trapping load
      or division leaves the block midway when no handler here catches
      it), and neither access is itself part of a call.  The update sits
      before the first of them.

   Not combined: ranges (one call each), bit-fields unless the very same
   reference, histogram mode (saturating byte counters), callback mode
   (one hook call per access, as documented).

   Then, across a loop's iterations, an access whose address the loop
   never changes is counted in a register (below).

   -fplugin-arg-memprof-combine=none|block|loop chooses (default loop);
   the dump lists every combined update and every register counter.  The
   granule is abi.h's MEMPROF_GRANULE_SIZE, read in counter_granule
   only.  */

#include "gcc-plugin.h"

#include "tree.h"
#include "function.h"
#include "basic-block.h"
#include "gimple.h"
#include "gimple-iterator.h"
#include "ssa.h"
#include "builtins.h"
#include "fold-const.h"
#include "tree-pretty-print.h"
#include "dumpfile.h"
#include "cfgloop.h"
#include "tree-ssa-loop-manip.h"
#include "gimplify.h"
#include "cgraph.h"
#include "tree-ssa-loop.h"
#include "tree-scalar-evolution.h"
#include "tree-ssa-loop-niter.h"
#include "gimplify-me.h"
#include "tree-eh.h"

#include "memprof/abi.h"
#include "plugin.h"
#include "emit.h"
#include "combine.h"
#include "bursts.h"

/* An address as X + CONSTANT, X = BASE (+ INDEX * STEP) (+ INDEX2)
   (+ OFFSET), with X known to be MISALIGN modulo ALIGN bytes.  */
struct address_form
{
  tree base, index, step, index2, offset;
  HOST_WIDE_INT constant;
  unsigned HOST_WIDE_INT align, misalign;
};

/* The bytes of one counter.  */
static unsigned HOST_WIDE_INT
counter_granule (void)
{
  return MEMPROF_GRANULE_SIZE;
}

static bool
is_bit_field_reference (tree ref)
{
  return (TREE_CODE (ref) == COMPONENT_REF
          && DECL_BIT_FIELD_TYPE (TREE_OPERAND (ref, 1)))
         || TREE_CODE (ref) == BIT_FIELD_REF;
}

/* What GCC has proven about the alignment of the pointer POINTER: in
   *ALIGN and *MISALIGN, bytes.  */
static void
pointer_alignment (tree pointer, unsigned HOST_WIDE_INT *align,
                   unsigned HOST_WIDE_INT *misalign)
{
  unsigned int align_bits;
  unsigned HOST_WIDE_INT bitpos;
  /* For an SSA name, its points-to info (no type is trusted); for an
     address, the object's declared alignment.  */
  get_pointer_alignment_1 (pointer, &align_bits, &bitpos);
  *align = MAX (align_bits / BITS_PER_UNIT, 1u);
  *misalign = (bitpos / BITS_PER_UNIT) & (*align - 1);
}

/* REF's first byte as an address_form, or false when it has none.  */
static bool
address_form_of (tree ref, struct address_form *form)
{
  poly_int64 bitsize, bitpos;
  HOST_WIDE_INT constant_bits;
  tree offset;
  machine_mode mode;
  int unsignedp, reversep, volatilep;

  memset (form, 0, sizeof *form);
  tree inner = get_inner_reference (ref, &bitsize, &bitpos, &offset, &mode,
                                    &unsignedp, &reversep, &volatilep);
  if (!bitpos.is_constant (&constant_bits) || constant_bits % BITS_PER_UNIT)
    return false;
  form->constant = constant_bits / BITS_PER_UNIT;
  form->offset = offset;

  if (DECL_P (inner))
    {
      form->base = inner;
      form->align = MAX (DECL_ALIGN_UNIT (inner), 1u);
      form->misalign = 0;
    }
  else if (TREE_CODE (inner) == MEM_REF || TREE_CODE (inner) == TARGET_MEM_REF)
    {
      poly_int64 ref_offset;
      HOST_WIDE_INT ref_constant;
      if (!mem_ref_offset (inner).to_shwi (&ref_offset)
          || !ref_offset.is_constant (&ref_constant))
        return false;
      form->constant += ref_constant;
      form->base = TREE_OPERAND (inner, 0);
      pointer_alignment (form->base, &form->align, &form->misalign);
      if (TREE_CODE (inner) == TARGET_MEM_REF)
        {
          form->index = TMR_INDEX (inner);
          form->step = TMR_STEP (inner);
          form->index2 = TMR_INDEX2 (inner);
          if (form->index)
            {
              unsigned HOST_WIDE_INT step
                  = form->step ? TREE_INT_CST_LOW (form->step) : 1;
              form->align = MIN (form->align, least_bit_hwi (step));
            }
          if (form->index2)
            form->align = 1;
        }
    }
  else
    return false;

  if (offset)
    {
      unsigned int zeros = tree_ctz (offset);
      if (zeros < HOST_BITS_PER_INT - 1)
        form->align = MIN (form->align, 1ul << zeros);
    }
  form->align = MIN (form->align, counter_granule ());
  form->misalign &= form->align - 1;
  return true;
}

static bool
same_operand (tree a, tree b)
{
  if (a == NULL_TREE || b == NULL_TREE)
    return a == b;
  return operand_equal_p (a, b, 0);
}

/* Do A and B designate first bytes in one counter's granule?  */
static bool
same_counter (const struct address_form *a, const struct address_form *b)
{
  if (!same_operand (a->base, b->base) || !same_operand (a->index, b->index)
      || !same_operand (a->step, b->step)
      || !same_operand (a->index2, b->index2)
      || !same_operand (a->offset, b->offset))
    return false;
  /* Both have the same X, so the same ALIGN and MISALIGN.  */
  HOST_WIDE_INT align = a->align, misalign = a->misalign;
  HOST_WIDE_INT first = misalign + a->constant;
  HOST_WIDE_INT second = misalign + b->constant;
  /* Floor division: the constants may be negative.  */
  HOST_WIDE_INT chunk_first
      = first >= 0 ? first / align : -((-first + align - 1) / align);
  HOST_WIDE_INT chunk_second
      = second >= 0 ? second / align : -((-second + align - 1) / align);
  return chunk_first == chunk_second;
}

/* Can A take part in a combined update?  */
static bool
combinable (const memory_access *a)
{
  return a->ref != NULL_TREE
         && (a->kind == ACCESS_LOAD || a->kind == ACCESS_STORE)
         && !is_gimple_call (a->stmt);
}

/* A candidate for combining: its access, its form, its segment of the
   block (the calls and asm statements before it).  */
struct candidate
{
  unsigned access;
  basic_block bb;
  unsigned segment;
  bool has_form;
  struct address_form form;
};

/* The segment of every statement: a new one at each call or asm, and
   after each statement that may throw.  Under -fnon-call-exceptions a
   load, a store or a division that traps may throw (from a signal
   handler), and when no handler of this function catches it the
   statement does not end its block: the exception leaves the block
   midway, by no edge.  The accesses after it would then be counted
   without running; the statement itself stays with the accesses before
   it, as an access's own update comes before the access.  Without
   -fnon-call-exceptions only calls may throw.  */
static hash_map<gimple *, unsigned> *
number_segments (void)
{
  hash_map<gimple *, unsigned> *segments = new hash_map<gimple *, unsigned>;
  basic_block bb;
  unsigned segment = 0;
  FOR_EACH_BB_FN (bb, cfun)
  {
    segment++;
    for (gimple_stmt_iterator gsi = gsi_start_bb (bb); !gsi_end_p (gsi);
         gsi_next (&gsi))
      {
        gimple *stmt = gsi_stmt (gsi);
        if (is_gimple_call (stmt) || gimple_code (stmt) == GIMPLE_ASM)
          segment++;
        segments->put (stmt, segment);
        if (stmt_could_throw_p (cfun, stmt))
          segment++;
      }
  }
  return segments;
}

static bool
same_reference (const memory_access *a, const memory_access *b)
{
  return operand_equal_p (a->ref, b->ref, 0);
}

/* See combine.h.  */
unsigned
combine_counter_updates (vec<memory_access> *accesses,
                         const vec<enum verdict> *verdicts,
                         vec<unsigned> *counts)
{
  unsigned combined = 0;
  auto_vec<struct candidate> leaders;
  bool enabled = plugin_options.combine != COMBINE_NONE
                 && !plugin_options.histogram && !plugin_options.callbacks;

  counts->safe_grow_cleared (accesses->length ());
  for (unsigned i = 0; i < accesses->length (); i++)
    (*counts)[i] = (*verdicts)[i] == INSTRUMENT ? 1 : 0;
  if (!enabled)
    return 0;

  hash_map<gimple *, unsigned> *segments = number_segments ();
  for (unsigned i = 0; i < accesses->length (); i++)
    {
      const memory_access *a = &(*accesses)[i];
      if ((*verdicts)[i] != INSTRUMENT || !combinable (a))
        continue;
      struct candidate c;
      c.access = i;
      c.bb = gimple_bb (a->stmt);
      c.segment = *segments->get (a->stmt);
      c.has_form = !is_bit_field_reference (a->ref)
                   && address_form_of (a->ref, &c.form);
      bool merged = false;
      /* Leaders of other segments never match again: the accesses come
         in statement order, so only the current segment's are kept.  */
      for (unsigned l = 0; l < leaders.length (); l++)
        {
          struct candidate *leader = &leaders[l];
          if (leader->segment != c.segment)
            continue;
          const memory_access *b = &(*accesses)[leader->access];
          if ((c.has_form && leader->has_form
               && same_counter (&leader->form, &c.form))
              || same_reference (a, b))
            {
              (*counts)[leader->access]++;
              (*counts)[i] = 0;
              combined++;
              merged = true;
              break;
            }
        }
      if (merged)
        continue;
      if (!leaders.is_empty () && leaders.last ().segment != c.segment)
        leaders.truncate (0);
      leaders.safe_push (c);
    }
  delete segments;

  if (dump_file)
    for (unsigned i = 0; i < accesses->length (); i++)
      if ((*counts)[i] > 1)
        {
          fprintf (dump_file, ";; memprof: one update adds %u at ",
                   (*counts)[i]);
          print_generic_expr (dump_file, (*accesses)[i].ref, TDF_SLIM);
          fputc ('\n', dump_file);
        }
  return combined;
}

/* ---- Counting in a register over a loop ----

   An access whose address a loop never changes (every SSA name in it is
   defined outside the loop) hits the same counter at every iteration.
   When the loop has no call and no inline asm (nothing in it can free
   the block, dump the profile, exit or longjmp), no irreducible region,
   and only normal exits, the accesses are counted in a register: 0 on
   the preheader edge, += N at the access, and on every exit edge one
   update adds the register to the counter.  The loop is the outermost
   one with these properties.  Where the access never ran on the way to
   an exit the register is 0 and the update adds 0 at address 0
   (append_deferred_update), as the address may then be anything.

   The totals stay exact; what changes is when they reach the shadow: a
   profile dumped while such a loop runs (a periodic dump, a dump from a
   signal handler) lacks the iterations of that loop's current run.  */

/* One register counter: the loop, the access whose address the exits
   count at, its form, the register.  */
struct loop_counter
{
  class loop *loop;
  unsigned access;
  bool has_form;
  struct address_form form;
  tree count;
};

/* Loops are kept with preheaders while the pass runs.  */
static bool loops_prepared;

/* See combine.h.  */
void
prepare_loop_counting (void)
{
  loops_prepared = false;
  if (plugin_options.combine != COMBINE_LOOP || plugin_options.histogram
      || plugin_options.callbacks || number_of_loops (cfun) <= 1)
    return;
  loop_optimizer_init (LOOPS_NORMAL);
  scev_initialize ();
  loops_prepared = true;
}

/* See combine.h.  */
void
finish_loop_counting (void)
{
  if (loops_prepared)
    {
      scev_finalize ();
      loop_optimizer_finalize ();
    }
  loops_prepared = false;
}

/* See combine.h.  */
bool
loop_is_straight (class loop *loop)
{
  bool can = true;
  basic_block *body = get_loop_body (loop);
  for (unsigned i = 0; can && i < loop->num_nodes; i++)
    {
      if (body[i]->flags & BB_IRREDUCIBLE_LOOP)
        can = false;
      for (gimple_stmt_iterator gsi = gsi_start_bb (body[i]);
           can && !gsi_end_p (gsi); gsi_next (&gsi))
        if (is_gimple_call (gsi_stmt (gsi))
            || gimple_code (gsi_stmt (gsi)) == GIMPLE_ASM
            /* -fnon-call-exceptions: a load or a division that may trap
               may throw, and the exception leaves the loop (and the
               function) by no edge: the exits' updates never run.  */
            || stmt_could_throw_p (cfun, gsi_stmt (gsi)))
          can = false;
    }
  free (body);
  return can;
}

/* Can LOOP count an access in a register: no call, no asm, no
   irreducible region, at least one exit and only normal ones?  */
static bool
loop_can_count (class loop *loop)
{
  if (!loop_is_straight (loop) || !loop_preheader_edge (loop))
    return false;
  auto_vec<edge> exits = get_loop_exit_edges (loop);
  if (exits.is_empty ())
    return false;
  for (edge e : exits)
    if (e->flags & EDGE_COMPLEX)
      return false;
  return true;
}

/* walk_tree callback: a part of a reference that may change in the loop
   DATA (an SSA name defined in it), or that is not a plain constant
   layout (a variable array bound or element size, a variable field
   offset).  */
static tree
find_loop_variant (tree *tp, int *walk_subtrees, void *data)
{
  class loop *loop = (class loop *) data;
  tree t = *tp;
  if (TREE_CODE (t) == SSA_NAME)
    {
      basic_block def_bb = gimple_bb (SSA_NAME_DEF_STMT (t));
      return def_bb && flow_bb_inside_loop_p (loop, def_bb) ? t : NULL_TREE;
    }
  if ((TREE_CODE (t) == ARRAY_REF || TREE_CODE (t) == ARRAY_RANGE_REF)
      && (TREE_OPERAND (t, 2) || TREE_OPERAND (t, 3)))
    return t;
  if (TREE_CODE (t) == COMPONENT_REF && TREE_OPERAND (t, 2))
    return t;
  if (TYPE_P (t) || DECL_P (t))
    *walk_subtrees = 0;
  return NULL_TREE;
}

static bool
address_invariant_in (tree ref, class loop *loop)
{
  tree size = TYPE_SIZE_UNIT (TREE_TYPE (ref));
  if (size == NULL_TREE || TREE_CODE (size) != INTEGER_CST)
    return false;
  return walk_tree_without_duplicates (&ref, find_loop_variant, loop)
         == NULL_TREE;
}

/* The outermost loop around A that counts it in a register, or NULL.  */
static class loop *
counting_loop (const memory_access *a,
               hash_map<int_hash<int, -1, -2>, bool> *can_count)
{
  class loop *best = NULL;
  for (class loop *loop = gimple_bb (a->stmt)->loop_father;
       loop_outer (loop) != NULL; loop = loop_outer (loop))
    {
      bool *known = can_count->get (loop->num);
      bool can = known ? *known : loop_can_count (loop);
      if (!known)
        can_count->put (loop->num, can);
      if (!can || !address_invariant_in (a->ref, loop))
        break;
      best = loop;
    }
  return best;
}

/* ---- Strided accesses of a loop, counted at its exits ----

   An access whose address moves by the same constant STEP at each
   iteration of its loop (GCC's data-reference analysis, the vectoriser's:
   the address is FIRST + I * STEP at iteration I), in a block of the loop
   itself (not of an inner loop) that dominates the latch, runs once in
   every iteration but the last, and in the last at most once: its Jth run
   is at FIRST + J * STEP.  In a loop that counts in registers (above),
   the runs are counted in a register, += 1 at the access, and on every
   exit edge one call, __memprof_strided_access (FIRST, STEP, runs, N),
   gives each granule what the runs in it would have added
   (runtime/strided.c).  FIRST is computed on the preheader edge from the
   values the loop starts with.  Only steps shorter than a granule (so
   that several runs share a counter) and at most STRIDED_CALLS_MAX calls
   per loop (accesses times exits), in loops whose number of iterations
   GCC knows on entry (a counted loop): a loop with many exits and a
   short trip (a byte-by-byte comparison unrolled by hand) or one that
   stops at what it reads would pay more for the calls than the updates
   cost.  What changes is when the counts
   reach the shadow, as with the registers above.  */

#define STRIDED_CALLS_MAX 8

/* A loop with more exits is left alone: a search that stops at the first
   difference, unrolled by hand with an exit per step, mostly runs one or
   two iterations, and every run would pay for a call.  */
#define STRIDED_EXITS_MAX 2

/* A loop with at most this many iterations (GCC's bound) is left alone:
   the call at its exit would cost more than the updates it saves.  */
#define STRIDED_MIN_ITERATIONS 8

/* The runtime's __memprof_strided_access: the declaration the unit has
   already, or a new one.  */
static tree
strided_access_decl (void)
{
  symtab_node *node = symtab_node::get_for_asmname (
      get_identifier (MEMPROF_STRIDED_ACCESS_NAME));
  if (node != NULL && TREE_CODE (node->decl) == FUNCTION_DECL)
    return node->decl;
  return runtime_function (
      MEMPROF_STRIDED_ACCESS_NAME,
      build_function_type_list (void_type_node, const_ptr_type_node,
                                long_integer_type_node, long_unsigned_type_node,
                                long_unsigned_type_node, NULL_TREE));
}

/* walk_tree callback: an SSA name DATA's loop defines, which the
   preheader cannot read.  */
static tree
find_defined_in_loop (tree *tp, int *walk_subtrees, void *data)
{
  class loop *loop = (class loop *) data;
  if (TREE_CODE (*tp) == SSA_NAME)
    {
      basic_block def_bb = gimple_bb (SSA_NAME_DEF_STMT (*tp));
      return def_bb && flow_bb_inside_loop_p (loop, def_bb) ? *tp : NULL_TREE;
    }
  if (TYPE_P (*tp) || DECL_P (*tp))
    *walk_subtrees = 0;
  return NULL_TREE;
}

/* Adds COEFFICIENT times the evolution of TERM (an SSA name, or a
   value LOOP never changes) to *FIRST (sizetype) and *STEP.  False when
   TERM does not move by a constant step at each iteration, or may wrap
   in a type narrower than an address.  */
static bool
add_term (tree term, HOST_WIDE_INT coefficient, class loop *loop, tree *first,
          HOST_WIDE_INT *step)
{
  affine_iv iv;
  if (TREE_CODE (term) != SSA_NAME)
    {
      if (!is_gimple_min_invariant (term))
        return false;
      iv.base = term;
      iv.step = size_zero_node;
      iv.no_overflow = true;
    }
  else if (!simple_iv (loop, loop, term, &iv, false))
    return false;
  if (TREE_CODE (iv.step) != INTEGER_CST
      || (TYPE_PRECISION (TREE_TYPE (term)) < TYPE_PRECISION (sizetype)
          && !iv.no_overflow))
    return false;
  /* A pointer's step is a sizetype constant: -2 is 2^64 - 2.  */
  tree signed_step = fold_convert (ssizetype, iv.step);
  if (!tree_fits_shwi_p (signed_step))
    return false;
  *step += coefficient * tree_to_shwi (signed_step);
  tree value = fold_convert (sizetype, unshare_expr (iv.base));
  if (coefficient != 1)
    value = size_binop (MULT_EXPR, value, size_int (coefficient));
  *first = size_binop (PLUS_EXPR, *first, value);
  return true;
}

/* The address of REF's first byte at LOOP's first iteration, as an
   expression in *FIRST, and what it adds at each iteration, in *STEP,
   when REF is a MEM_REF or TARGET_MEM_REF (the forms GCC's loop
   optimisations leave in loops), perhaps with constant field offsets
   above it, whose parts move by constant steps; false otherwise.  */
static bool
strided_address (tree ref, class loop *loop, tree *first, HOST_WIDE_INT *step)
{
  poly_int64 bit_size, bit_position;
  tree variable_offset;
  machine_mode mode;
  int unsignedp, reversep, volatilep = 0;
  tree object
      = get_inner_reference (ref, &bit_size, &bit_position, &variable_offset,
                             &mode, &unsignedp, &reversep, &volatilep);
  HOST_WIDE_INT bits;
  if (variable_offset != NULL_TREE || !bit_position.is_constant (&bits)
      || bits % BITS_PER_UNIT != 0)
    return false;
  *first = size_int (bits / BITS_PER_UNIT);
  *step = 0;
  if (TREE_CODE (object) == MEM_REF)
    {
      *first = size_binop (PLUS_EXPR, *first,
                           fold_convert (sizetype, TREE_OPERAND (object, 1)));
      return add_term (TREE_OPERAND (object, 0), 1, loop, first, step);
    }
  if (TREE_CODE (object) != TARGET_MEM_REF)
    return false;
  if (TMR_OFFSET (object))
    *first = size_binop (PLUS_EXPR, *first,
                         fold_convert (sizetype, TMR_OFFSET (object)));
  if (!add_term (TMR_BASE (object), 1, loop, first, step))
    return false;
  if (TMR_INDEX (object))
    {
      HOST_WIDE_INT scale = 1;
      if (TMR_STEP (object))
        {
          if (!tree_fits_shwi_p (TMR_STEP (object)))
            return false;
          scale = tree_to_shwi (TMR_STEP (object));
        }
      if (!add_term (TMR_INDEX (object), scale, loop, first, step))
        return false;
    }
  if (TMR_INDEX2 (object)
      && !add_term (TMR_INDEX2 (object), 1, loop, first, step))
    return false;
  return true;
}

/* Does every exit of LOOP stop it after a number of iterations known on
   entry (an induction variable against a bound, perhaps under
   assumptions such as a difference divisible by the step)?  */
static bool
loop_is_counted (class loop *loop)
{
  auto_vec<edge> exits = get_loop_exit_edges (loop);
  for (edge e : exits)
    {
      class tree_niter_desc niter;
      if (!number_of_iterations_exit_assumptions (loop, e, &niter, NULL, false))
        return false;
    }
  return true;
}

/* A's loop when A is a strided access of it (above), with the address
   of its first run as an expression in *FIRST and its step in *STEP;
   NULL otherwise.  */
static class loop *
strided_loop (const memory_access *a,
              hash_map<int_hash<int, -1, -2>, bool> *can_count, tree *first,
              HOST_WIDE_INT *step)
{
  basic_block bb = gimple_bb (a->stmt);
  class loop *loop = bb->loop_father;
  if (loop_outer (loop) == NULL || loop->latch == NULL
      || is_bit_field_reference (a->ref)
      || !dominated_by_p (CDI_DOMINATORS, loop->latch, bb))
    return NULL;
  HOST_WIDE_INT bound = max_loop_iterations_int (loop);
  if (bound >= 0 && bound < STRIDED_MIN_ITERATIONS)
    return NULL;
  /* A counted loop only (its iterations known on entry, as an expression
     of the values it starts with): a loop that stops at what it reads (a
     scan to the next non-blank) mostly runs once or twice.  */
  if (!loop_is_counted (loop))
    return NULL;
  bool *known = can_count->get (loop->num);
  bool can = known ? *known : loop_can_count (loop);
  if (!known)
    can_count->put (loop->num, can);
  if (!can)
    return NULL;
  if (!strided_address (a->ref, loop, first, step))
    return NULL;
  HOST_WIDE_INT granule = (HOST_WIDE_INT) counter_granule ();
  if (*step == 0 || *step >= granule || *step <= -granule
      || !pow2p_hwi (absu_hwi (*step)))
    return NULL;
  if (walk_tree_without_duplicates (first, find_defined_in_loop, loop))
    return NULL;
  return loop;
}

/* One strided access: its loop and block, the accesses each run counts,
   the address of its first run and its step; the call that counts it
   (CALL: the index of the candidate whose call does, itself or the
   first of its group), and for a call, the step and the accesses per
   run of the group.  */
struct strided_candidate
{
  class loop *loop;
  basic_block bb;
  unsigned access, weight;
  tree first;
  HOST_WIDE_INT step;
  unsigned call;
  HOST_WIDE_INT call_step;
  HOST_WIDE_INT call_offset;
  unsigned per_run;
};

/* Group the candidates of one block whose addresses lie at constant
   distances from C's, with the same step and weight: when their offsets
   are an arithmetic progression of difference D with D times their
   number equal to the step (buf[0] ... buf[15] of a loop stepping 16),
   the addresses of all their runs are one progression of step D (or -D),
   and one call counts them all.  */
static void
group_strided (vec<struct strided_candidate> *candidates, unsigned c)
{
  struct strided_candidate *head = &(*candidates)[c];
  auto_vec<HOST_WIDE_INT> offsets;
  auto_vec<unsigned> members;
  offsets.safe_push (0);
  members.safe_push (c);
  for (unsigned j = c + 1; j < candidates->length (); j++)
    {
      struct strided_candidate *other = &(*candidates)[j];
      if (other->call != j || other->bb != head->bb || other->step != head->step
          || other->weight != head->weight)
        continue;
      tree difference
          = fold_build2 (MINUS_EXPR, sizetype, other->first, head->first);
      difference = fold_convert (ssizetype, difference);
      if (TREE_CODE (difference) != INTEGER_CST
          || !tree_fits_shwi_p (difference))
        continue;
      offsets.safe_push (tree_to_shwi (difference));
      members.safe_push (j);
    }
  unsigned m = offsets.length ();
  if (m < 2)
    return;
  HOST_WIDE_INT low = offsets[0], high = offsets[0];
  for (HOST_WIDE_INT o : offsets)
    {
      low = MIN (low, o);
      high = MAX (high, o);
    }
  HOST_WIDE_INT span = absu_hwi (head->step);
  if ((high - low) % (m - 1) != 0)
    return;
  HOST_WIDE_INT d = (high - low) / (HOST_WIDE_INT) (m - 1);
  if (d <= 0 || d * (HOST_WIDE_INT) m != span)
    return;
  /* Every offset low + K * D, each once.  */
  auto_sbitmap seen (m);
  bitmap_clear (seen);
  for (HOST_WIDE_INT o : offsets)
    {
      if ((o - low) % d != 0 || bitmap_bit_p (seen, (o - low) / d))
        return;
      bitmap_set_bit (seen, (o - low) / d);
    }
  for (unsigned j : members)
    (*candidates)[j].call = c;
  head->per_run = m;
  head->call_step = head->step > 0 ? d : -d;
  head->call_offset = head->step > 0 ? low : high;
}

/* The accesses of ACCESSES with a nonzero count in *COUNTS that are
   strided in their loop: counted as above, their count set to 0.  The
   accesses of one block share the register of their runs.  Returns how
   many; *EXIT_CALLS, the calls at the loops' exits.  */
static unsigned
count_strided_accesses (vec<memory_access> *accesses, vec<unsigned> *counts,
                        hash_map<int_hash<int, -1, -2>, bool> *can_count,
                        unsigned *exit_calls)
{
  auto_vec<struct strided_candidate> candidates;
  hash_map<int_hash<int, -1, -2>, unsigned> calls;
  unsigned moved = 0;

  *exit_calls = 0;
  if (access_sampling_enabled ())
    return 0;
  for (unsigned i = 0; i < accesses->length (); i++)
    {
      memory_access *a = &(*accesses)[i];
      tree first;
      HOST_WIDE_INT step;
      if ((*counts)[i] == 0 || !combinable (a))
        continue;
      class loop *loop = strided_loop (a, can_count, &first, &step);
      if (loop == NULL
          || get_loop_exit_edges (loop).length () > STRIDED_EXITS_MAX)
        continue;
      struct strided_candidate c = { loop,
                                     gimple_bb (a->stmt),
                                     i,
                                     (*counts)[i],
                                     first,
                                     step,
                                     candidates.length (),
                                     step,
                                     0,
                                     1 };
      candidates.safe_push (c);
    }
  for (unsigned c = 0; c < candidates.length (); c++)
    if (candidates[c].call == c)
      group_strided (&candidates, c);
  /* The calls per loop: a loop that would make too many keeps its
     updates.  */
  for (unsigned c = 0; c < candidates.length (); c++)
    if (candidates[c].call == c)
      {
        class loop *loop = candidates[c].loop;
        unsigned *used = calls.get (loop->num);
        calls.put (loop->num,
                   (used ? *used : 0) + get_loop_exit_edges (loop).length ());
      }

  tree decl = NULL_TREE;
  hash_map<int_hash<int, -1, -2>, tree> runs_of_block;
  for (unsigned c = 0; c < candidates.length (); c++)
    {
      struct strided_candidate *k = &candidates[c];
      if (*calls.get (k->loop->num) > STRIDED_CALLS_MAX)
        continue;
      const memory_access *a = &(*accesses)[k->access];
      tree *known = runs_of_block.get (k->bb->index);
      tree runs = known ? *known : NULL_TREE;
      if (runs == NULL_TREE)
        {
          /* runs = 0 on the preheader, += 1 at the block's first
             strided access (no call in the loop: the block runs whole).  */
          runs = create_tmp_reg (long_unsigned_type_node, "memprof_runs");
          runs_of_block.put (k->bb->index, runs);
          gsi_insert_on_edge (
              loop_preheader_edge (k->loop),
              gimple_build_assign (runs,
                                   build_int_cst (long_unsigned_type_node, 0)));
          gassign *add = gimple_build_assign (
              runs, PLUS_EXPR, runs,
              build_int_cst (long_unsigned_type_node, 1));
          gimple_set_location (add, gimple_location (a->stmt));
          gimple_stmt_iterator gsi = gsi_for_stmt (a->stmt);
          gsi_insert_before (&gsi, add, GSI_SAME_STMT);
        }
      if (dump_file)
        {
          fprintf (
              dump_file,
              ";; memprof: strided over loop %d (step " HOST_WIDE_INT_PRINT_DEC
              "), counted at its %u exits%s: ",
              k->loop->num, k->step, get_loop_exit_edges (k->loop).length (),
              k->call != c ? " by another's call" : "");
          print_generic_expr (dump_file, a->ref, TDF_SLIM);
          fputc ('\n', dump_file);
        }
      moved++;
      (*counts)[k->access] = 0;
      if (k->call != c)
        continue;

      /* The call: the address of the group's first run on the
         preheader, the runs times the accesses per run at each exit.  */
      if (decl == NULL_TREE)
        decl = strided_access_decl ();
      gimple_seq seq = NULL;
      tree start = size_binop (PLUS_EXPR, k->first, size_int (k->call_offset));
      tree first = force_gimple_operand (
          fold_convert (const_ptr_type_node, start), &seq, true, NULL_TREE);
      gsi_insert_seq_on_edge (loop_preheader_edge (k->loop), seq);
      auto_vec<edge> exits = get_loop_exit_edges (k->loop);
      for (edge e : exits)
        {
          gimple_seq exit_seq = NULL;
          tree count = runs;
          if (k->per_run > 1)
            {
              count = make_ssa_name (long_unsigned_type_node);
              gimple_seq_add_stmt (
                  &exit_seq,
                  gimple_build_assign (
                      count, MULT_EXPR, runs,
                      build_int_cst (long_unsigned_type_node, k->per_run)));
            }
          gimple_seq_add_stmt (
              &exit_seq,
              gimple_build_call (
                  decl, 4, first,
                  build_int_cst (long_integer_type_node, k->call_step), count,
                  build_int_cst (long_unsigned_type_node, k->weight)));
          gsi_insert_seq_on_edge (e, exit_seq);
          (*exit_calls)++;
        }
    }
  return moved;
}

/* See combine.h.  */
unsigned
count_in_loop_registers (vec<memory_access> *accesses, vec<unsigned> *counts,
                         tree base, unsigned *exit_updates)
{
  unsigned moved = 0;
  auto_vec<struct loop_counter> counters;
  hash_map<int_hash<int, -1, -2>, bool> can_count;

  *exit_updates = 0;
  if (!loops_prepared)
    return 0;
  for (unsigned i = 0; i < accesses->length (); i++)
    {
      memory_access *a = &(*accesses)[i];
      if ((*counts)[i] == 0 || !combinable (a))
        continue;
      class loop *loop = counting_loop (a, &can_count);
      if (loop == NULL)
        continue;
      struct address_form form;
      bool has_form
          = !is_bit_field_reference (a->ref) && address_form_of (a->ref, &form);
      struct loop_counter *counter = NULL;
      for (struct loop_counter &c : counters)
        if (c.loop == loop
            && ((has_form && c.has_form && same_counter (&c.form, &form))
                || same_reference (&(*accesses)[c.access], a)))
          {
            counter = &c;
            break;
          }
      if (counter == NULL)
        {
          struct loop_counter c = { loop, i, has_form, form, NULL_TREE };
          c.count = create_tmp_reg (uint64_type_node, "memprof_count");
          counters.safe_push (c);
          counter = &counters.last ();
        }
      /* count += N before the access: the SSA form comes with the pass's
         TODO_update_ssa, PHIs included.  */
      gassign *add = gimple_build_assign (
          counter->count, PLUS_EXPR, counter->count,
          build_int_cst (uint64_type_node, (*counts)[i]));
      gimple_set_location (add, gimple_location (a->stmt));
      gimple_stmt_iterator gsi = gsi_for_stmt (a->stmt);
      gsi_insert_before (&gsi, add, GSI_SAME_STMT);
      moved++;
      (*counts)[i] = 0;
    }

  for (struct loop_counter &c : counters)
    {
      const memory_access *a = &(*accesses)[c.access];
      gassign *zero
          = gimple_build_assign (c.count, build_int_cst (uint64_type_node, 0));
      gsi_insert_on_edge (loop_preheader_edge (c.loop), zero);
      auto_vec<edge> exits = get_loop_exit_edges (c.loop);
      for (edge e : exits)
        {
          gimple_seq seq = NULL;
          append_deferred_update (&seq, a, base, c.count);
          gsi_insert_seq_on_edge (e, seq);
          (*exit_updates)++;
        }
      if (dump_file)
        {
          fprintf (dump_file,
                   ";; memprof: counted in a register over loop %d, added "
                   "at its %u exits: ",
                   c.loop->num, exits.length ());
          print_generic_expr (dump_file, a->ref, TDF_SLIM);
          fputc ('\n', dump_file);
        }
    }
  unsigned exit_calls;
  unsigned strided
      = count_strided_accesses (accesses, counts, &can_count, &exit_calls);
  moved += strided;
  *exit_updates += exit_calls;
  if (!counters.is_empty () || strided > 0)
    gsi_commit_edge_inserts ();
  return moved;
}
