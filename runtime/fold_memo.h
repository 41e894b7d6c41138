/* The fold memo's nodes and the lookup of a step in a node's own slots
   (fold_memo.c has the rest): shared with the last folded walk
   (stack.c), which extends its stack's list inline: as a call of its
   own, fold_memo_extend cost about 30 instructions an allocation more on
   binary_trees (callgrind), its frame, the walk's registers saved and
   the walk's arrays passed by address.  */

#ifndef MEMPROF_RUNTIME_FOLD_MEMO_H
#define MEMPROF_RUNTIME_FOLD_MEMO_H

#include "internal.h"

/* Fold steps kept in a node (a power of two; more go to the table): a
   list has about as many as there are calls in the code of its last
   frame's function, an allocation or a recursive call each (binary
   trees: 17, as GCC inlines the recursion into itself).  */
#define NODE_STEPS 32
/* Slots a step is looked for in, from its home slot: a step that finds
   them taken goes to the table, so a full node's miss costs this many
   probes, not NODE_STEPS.  */
#define NODE_PROBES 4

struct fold_node;

/* A step from a node by the frame PC; TO NULL: none.  */
struct fold_edge
{
  uintptr_t pc;
  const struct fold_node *_Atomic to;
};

/* One list of kept frames, root first, and the first steps from it: in
   the node, a step reads memory already near what the last ones read
   (the nodes lie together, in the order they were made), where the table
   spreads its slots over megabytes.  */
struct fold_node
{
  const struct fold_node *parent; /* NULL: the list of one frame */
  uintptr_t pc;                   /* its last frame (leaf side) */
  uintptr_t function;             /* of PC; 0 for MEMPROF_RAW_FOLD_PC */
  /* The list's context cut to MAX frames, as context_word_of packs
     them in one word (read in one load, from the line of PC); 0: none
     yet.  */
  _Atomic uintptr_t context;
  /* Where the steps go that find every slot they probe here taken: a
     block of NODE_STEPS more (a node of the array, used only for its
     steps), and so on; NULL: none yet.  A list with many steps (the
     C library's start-up frame with main's, when GCC inlines a recursive
     builder into main: over a hundred) keeps them there, near each
     other, not in the table.  */
  const struct fold_node *_Atomic more;
  struct fold_edge steps[NODE_STEPS];
};

/* Where a node's steps by PC start (linear probing within the node).  */
static inline unsigned
step_home (uintptr_t pc)
{
  return (unsigned) (((uint64_t) pc * 0x9e3779b97f4a7c15ULL) >> 59)
         % NODE_STEPS;
}

/* The step from FROM by PC in FROM's own slots: true with *TO the step
   or NULL (an empty slot: no such step anywhere, as slots only fill),
   false when every slot probed holds another step (it may be in FROM's
   next blocks or in the table).  */
static inline bool
step_probe (const struct fold_node *from, uintptr_t pc,
            const struct fold_node **to)
{
  for (unsigned i = step_home (pc), n = 0; n < NODE_PROBES;
       i = (i + 1) % NODE_STEPS, n++)
    {
      const struct fold_edge *edge = &from->steps[i];
      *to = atomic_load_explicit (&edge->to, memory_order_acquire);
      if (*to == NULL || edge->pc == pc)
        return true;
    }
  return false;
}

/* The step from FROM by PC when it is in FROM's own slots; NULL when
   not (FROM NULL, a step not made yet, or one in the table).  */
static inline const struct fold_node *
step_in_node (const struct fold_node *from, uintptr_t pc)
{
  const struct fold_node *to;
  return from != NULL && step_probe (from, pc, &to) ? to : NULL;
}

/* The step from FROM by PC that step_in_node did not find: the thread's
   step cache, FROM's next blocks, the table, or a new step; NULL when the
   memo is full (fold_memo.c).  */
const struct fold_node *fold_memo_step_slow (const struct fold_node *from,
                                             uintptr_t pc, uintptr_t function);

/* fold_memo_extend (internal.h), inline.  */
static inline __attribute__ ((always_inline)) const struct fold_node *
fold_memo_extend_inline (const struct fold_node *node,
                         const uintptr_t *return_addresses,
                         const uintptr_t *functions, int count,
                         const struct fold_node **nodes)
{
  for (int i = count - 1; i >= 0; i--)
    {
      uintptr_t pc = return_addresses[i] - 1;
      const struct fold_node *to = step_in_node (node, pc);
      if (UNLIKELY (to == NULL))
        {
          to = fold_memo_step_slow (node, pc, functions[i]);
          if (UNLIKELY (to == NULL))
            return NULL;
        }
      nodes[i] = node = to;
    }
  return node;
}

#endif
