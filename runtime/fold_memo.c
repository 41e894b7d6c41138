/* The fold memo: the depot context of a captured stack with its
   recursion folded (fold_recursion=1), without folding the stack and
   interning it into the depot again at each allocation.  Recursive code
   has a distinct raw call stack at nearly every allocation (binary trees:
   2^depth of them), so the thread's context cache, keyed by the raw
   stack, misses every time; but the stacks fold to few contexts.

   stack_fold_recursion (fold.c) walks a stack from its root and keeps a
   list of frames; each frame changes the list by a rule that depends on
   nothing but the list so far and the frame's return address (its
   function is a function of the address).  Here each list is a node of a
   trie -- its parent is the list without its last frame -- with one node
   per distinct list, and the step from a list by a return address is
   memoized: a stack is folded by one table probe a frame, and the node of
   the folded stack keeps its depot context.  So the context given is the
   one stack_finish and depot_intern give, by construction.

   The thread keeps the last stack it folded, root first, with the node
   after each of its frames: the next stack shares its root frames with
   it (the same builder one level up or down), so only the frames from
   the first one that differs are stepped.

   The table and the nodes are shared by all threads and never freed:
   lock-free reads, inserts under one spin lock (only a stack not seen
   before inserts).  When the table is full, fold_memo_context gives NULL
   and the caller folds and interns as before.  verify_contexts=1 checks
   the contexts given here against those stack_finish and depot_intern
   give for a full unwind.  */

#include "internal.h"
#include "fold_memo.h"
#include "rawformat.h"

/* Slots of the edge table (a power of two), filled to three quarters. */
#define FOLD_MEMO_SLOTS (1UL << 17)
#define FOLD_MEMO_FILL (FOLD_MEMO_SLOTS / 4 * 3)
/* The slots a sampled run uses (runtime_table_entries), the first of
   the table's: its few thousand contexts would otherwise each fault in
   pages of their own.  */
#define FOLD_MEMO_SAMPLED_SLOTS (1UL << 14)
/* Nodes at most (each has an edge in the table, so fewer than
   FOLD_MEMO_FILL).  */
#define FOLD_MEMO_NODES (1UL << 15)
/* Root frames of the thread's last stack kept for the next one.  */
#define LAST_STACK_FRAMES STACK_CAPTURE_MAX

/* A depot context's address and the MAX it was cut to in one word: the
   address in the low CONTEXT_MAX_SHIFT bits (user space), MAX above.  */
#define CONTEXT_MAX_SHIFT 48
/* fold_memo_node_context reads the word inline (internal.h).  */
_Static_assert(offsetof (struct fold_node, context) == FOLD_NODE_CONTEXT_OFFSET,
               "the context word where internal.h reads it");
_Static_assert(CONTEXT_MAX_SHIFT == FOLD_CONTEXT_MAX_SHIFT,
               "the context word packed as internal.h unpacks it");

/* The word for CONTEXT cut to MAX; 0 when they do not fit (the context
   is then made again at each use).  */
static inline uintptr_t
context_word_of (const struct depot_context *context, int max)
{
  uintptr_t address = (uintptr_t) context;
  if (max < 0 || (uintptr_t) max >= (1UL << (64 - CONTEXT_MAX_SHIFT))
      || (address >> CONTEXT_MAX_SHIFT) != 0)
    return 0;
  return address | (uintptr_t) max << CONTEXT_MAX_SHIFT;
}

/* An edge: from a list (NULL: the empty one) by a return address - 1 to
   a list: the list with that frame appended (EDGE_CHILD), or the list a
   fold step gives (EDGE_STEP).  */
enum edge_kind
{
  EDGE_CHILD,
  EDGE_STEP
};

struct fold_slot
{
  const struct fold_node *from;
  uintptr_t pc;
  uintptr_t kind;
  const struct fold_node *_Atomic to; /* NULL: an empty slot */
};

/* The table and the nodes, committed as they are used.  */
struct fold_memory
{
  struct fold_slot slots[FOLD_MEMO_SLOTS];
  struct fold_node nodes[FOLD_MEMO_NODES];
};

static struct fold_slot *_Atomic fold_table;
static struct fold_memory *fold_memory;
static size_t fold_slots_used, fold_nodes_used;
/* The slots in use (a power of two, FOLD_MEMO_SLOTS at most) less one,
   and three quarters of them: set when the table is made.  */
static size_t fold_slot_mask, fold_slot_fill;
static spinlock_t fold_lock = SPINLOCK_INIT;
static _Atomic bool fold_table_failed;

static __thread uintptr_t last_frames[LAST_STACK_FRAMES]
    __attribute__ ((tls_model ("initial-exec")));
static __thread const struct fold_node *last_nodes[LAST_STACK_FRAMES]
    __attribute__ ((tls_model ("initial-exec")));
static __thread uint32_t last_count
    __attribute__ ((tls_model ("initial-exec")));
/* The thread's steps and contexts not found in the memo (for
   context_cache_report).  */
static __thread uint64_t memo_misses
    __attribute__ ((tls_model ("initial-exec")));

uint64_t
fold_memo_thread_misses (void)
{
  return memo_misses;
}

static inline size_t
edge_slot (const struct fold_node *from, uintptr_t pc, enum edge_kind kind)
{
  uint64_t hash = ((uint64_t) (uintptr_t) from * 0x9e3779b97f4a7c15ULL)
                  ^ ((uint64_t) pc + kind) * 0xc2b2ae3d27d4eb4fULL;
  return (size_t) ((hash ^ (hash >> 29)) & fold_slot_mask);
}

/* The edge's destination, or NULL when it is not in TABLE.  */
static inline const struct fold_node *
edge_find (struct fold_slot *table, const struct fold_node *from, uintptr_t pc,
           enum edge_kind kind)
{
  for (size_t i = edge_slot (from, pc, kind);; i = (i + 1) & fold_slot_mask)
    {
      struct fold_slot *slot = &table[i];
      const struct fold_node *to
          = atomic_load_explicit (&slot->to, memory_order_acquire);
      if (to == NULL)
        return NULL;
      if (slot->from == from && slot->pc == pc && slot->kind == kind)
        return to;
    }
}

/* The table, made on first use; NULL when it cannot be.  */
static struct fold_slot *
table_get (void)
{
  struct fold_slot *table
      = atomic_load_explicit (&fold_table, memory_order_acquire);
  if (LIKELY (table != NULL))
    return table;
  if (atomic_load_explicit (&fold_table_failed, memory_order_relaxed))
    return NULL;
  spin_lock (&fold_lock);
  table = atomic_load_explicit (&fold_table, memory_order_relaxed);
  if (table == NULL
      && !atomic_load_explicit (&fold_table_failed, memory_order_relaxed))
    {
      fold_memory = runtime_map (sizeof *fold_memory);
      if (fold_memory == NULL)
        atomic_store_explicit (&fold_table_failed, true, memory_order_relaxed);
      else
        {
          size_t slots = runtime_table_entries (FOLD_MEMO_SLOTS,
                                                FOLD_MEMO_SAMPLED_SLOTS);
          fold_slot_mask = slots - 1;
          fold_slot_fill = slots / 4 * 3;
          table = fold_memory->slots;
          atomic_store_explicit (&fold_table, table, memory_order_release);
        }
    }
  spin_unlock (&fold_lock);
  return table;
}

/* See internal.h.  The memory stays (a thread may be reading it); every
   way to a node starts at table_get, or at the folded walk's last walk,
   which stack_forget_code drops (facts_epoch).  */
void
fold_memo_forget (void)
{
  spin_lock (&fold_lock);
  atomic_store_explicit (&fold_table_failed, true, memory_order_relaxed);
  atomic_store_explicit (&fold_table, NULL, memory_order_release);
  spin_unlock (&fold_lock);
}

/* Add the edge FROM -PC, KIND-> TO, or give the destination another
   thread added first; NULL when the table is full.  Under fold_lock.  */
static const struct fold_node *
edge_add_locked (struct fold_slot *table, const struct fold_node *from,
                 uintptr_t pc, enum edge_kind kind, const struct fold_node *to)
{
  size_t i = edge_slot (from, pc, kind);
  for (;; i = (i + 1) & fold_slot_mask)
    {
      struct fold_slot *slot = &table[i];
      const struct fold_node *there
          = atomic_load_explicit (&slot->to, memory_order_relaxed);
      if (there == NULL)
        break;
      if (slot->from == from && slot->pc == pc && slot->kind == kind)
        return there;
    }
  if (fold_slots_used >= fold_slot_fill)
    return NULL;
  fold_slots_used++;
  table[i].from = from;
  table[i].pc = pc;
  table[i].kind = kind;
  atomic_store_explicit (&table[i].to, to, memory_order_release);
  return to;
}

/* The list FROM with the frame PC (of FUNCTION) appended; NULL when the
   table is full.  */
static const struct fold_node *
node_child (struct fold_slot *table, const struct fold_node *from, uintptr_t pc,
            uintptr_t function)
{
  const struct fold_node *found = edge_find (table, from, pc, EDGE_CHILD);
  if (found != NULL)
    return found;
  spin_lock (&fold_lock);
  found = edge_find (table, from, pc, EDGE_CHILD);
  if (found == NULL && fold_slots_used < fold_slot_fill
      && fold_nodes_used < FOLD_MEMO_NODES)
    {
      struct fold_node *fresh = &fold_memory->nodes[fold_nodes_used++];
      fresh->parent = from;
      fresh->pc = pc;
      fresh->function = function;
      found = edge_add_locked (table, from, pc, EDGE_CHILD, fresh);
    }
  spin_unlock (&fold_lock);
  return found;
}

static inline bool
is_fold_marker (const struct fold_node *node)
{
  return node->function == 0 && node->pc == MEMPROF_RAW_FOLD_PC;
}

static inline const struct fold_node *
step_find (struct fold_slot *table, const struct fold_node *from, uintptr_t pc)
{
  const struct fold_node *to;
  for (const struct fold_node *block = from; block != NULL;
       block = atomic_load_explicit (&((struct fold_node *) block)->more,
                                     memory_order_acquire))
    if (step_probe (block, pc, &to))
      return to;
  return edge_find (table, from, pc, EDGE_STEP);
}

/* Put the step by PC to TO in BLOCK's slots, or give the step by PC
   already there; NULL when every slot probed holds another step.  Under
   fold_lock.  */
static const struct fold_node *
step_put_locked (struct fold_node *block, uintptr_t pc,
                 const struct fold_node *to)
{
  for (unsigned i = step_home (pc), n = 0; n < NODE_PROBES;
       i = (i + 1) % NODE_STEPS, n++)
    {
      struct fold_edge *edge = &block->steps[i];
      const struct fold_node *there
          = atomic_load_explicit (&edge->to, memory_order_relaxed);
      if (there == NULL)
        {
          edge->pc = pc;
          atomic_store_explicit (&edge->to, to, memory_order_release);
          return to;
        }
      if (edge->pc == pc)
        return there;
    }
  return NULL;
}

/* Add the step FROM -PC-> TO, or give the one another thread added
   first: in FROM's slots, or its next blocks (one more is made when they
   are all taken), or the table when no node is left; NULL when the table
   is full.  Under fold_lock.  */
static const struct fold_node *
step_add_locked (struct fold_slot *table, const struct fold_node *from,
                 uintptr_t pc, const struct fold_node *to)
{
  struct fold_node *block = (struct fold_node *) from;
  while (block != NULL)
    {
      const struct fold_node *put = step_put_locked (block, pc, to);
      if (put != NULL)
        return put;
      struct fold_node *next = (struct fold_node *) atomic_load_explicit (
          &block->more, memory_order_relaxed);
      if (next == NULL && fold_nodes_used < FOLD_MEMO_NODES)
        {
          next = &fold_memory->nodes[fold_nodes_used++];
          atomic_store_explicit (&block->more, next, memory_order_release);
        }
      block = next;
    }
  return edge_add_locked (table, from, pc, EDGE_STEP, to);
}

/* The list stack_fold_recursion keeps after FROM when the next frame
   (rootwards to leafwards) is PC, of FUNCTION (0: not looked up yet).  */
static const struct fold_node *
fold_step (struct fold_slot *table, const struct fold_node *from, uintptr_t pc,
           uintptr_t function)
{
  const struct fold_node *to = step_find (table, from, pc);
  if (LIKELY (to != NULL))
    return to;
  memo_misses++;
  if (function == 0)
    function = stack_function_of (pc);
  /* The newest kept frame of the same function, as fold.c searches.  */
  const struct fold_node *same = from;
  while (same != NULL && same->function != function)
    same = same->parent;
  if (same == NULL)
    to = node_child (table, from, pc, function);
  else
    {
      /* Cut back to SAME, which the newer frame replaces, after one
         marker.  */
      const struct fold_node *base = same->parent;
      if (base == NULL || !is_fold_marker (base))
        base = node_child (table, base, MEMPROF_RAW_FOLD_PC, 0);
      to = base != NULL ? node_child (table, base, pc, function) : NULL;
    }
  if (to == NULL)
    return NULL;
  spin_lock (&fold_lock);
  to = step_add_locked (table, from, pc, to);
  spin_unlock (&fold_lock);
  return to;
}

/* node_context when the node has no context for MAX yet.  */
static __attribute__ ((noinline)) struct depot_context *
node_context_made (const struct fold_node *node, int max)
{
  struct fold_node *memo_node = (struct fold_node *) node;
  memo_misses++;
  uintptr_t pcs[STACK_CAPTURE_MAX];
  uint32_t depth = 0;
  for (; node != NULL && depth < (uint32_t) max; node = node->parent)
    pcs[depth++] = node->pc;
  struct depot_context *context = depot_intern (pcs, depth);
  /* One word: a thread that reads it sees a context and its MAX
     together, whichever thread stored last.  */
  atomic_store_explicit (&memo_node->context, context_word_of (context, max),
                         memory_order_release);
  return context;
}

/* NODE's list cut to MAX frames (its leaf side), interned: the hot case
   one load, from the line of the node's PC, with no frame to set up (the
   miss's array is node_context_made's).  */
static inline struct depot_context *
node_context (const struct fold_node *node, int max)
{
  uintptr_t word = atomic_load_explicit (&((struct fold_node *) node)->context,
                                         memory_order_acquire);
  if (LIKELY (word != 0 && word >> CONTEXT_MAX_SHIFT == (uintptr_t) max))
    return (struct depot_context *) (word & ((1UL << CONTEXT_MAX_SHIFT) - 1));
  return node_context_made (node, max);
}

/* The thread's last steps that were not in their node's own slots
   (direct-mapped by the step's node and return address): such a step is
   found after every probe of the full node and of each block before its
   own, or in the table.  In binary_trees, where GCC inlines the builder
   into main, the C library's start-up frame is stepped from by over a
   hundred return addresses of main, four blocks of them: 12 % of the
   allocations took that step, at about 166 instructions each (20 an
   allocation).  Nodes and steps are never changed once published nor
   freed, so a step kept here stays true.  */
#define STEP_CACHE_ENTRIES 512 /* a power of two */
struct step_cache_entry
{
  const struct fold_node *from;
  uintptr_t pc;
  const struct fold_node *to; /* NULL: an empty entry */
};
static __thread struct step_cache_entry step_cache[STEP_CACHE_ENTRIES]
    __attribute__ ((tls_model ("initial-exec")));

/* See fold_memo.h.  */
const struct fold_node *
fold_memo_step_slow (const struct fold_node *from, uintptr_t pc,
                     uintptr_t function)
{
  /* The table first: NULL also once the memo is forgotten
     (fold_memo_forget), when the cache's steps may be wrong.  */
  struct fold_slot *table = table_get ();
  if (UNLIKELY (table == NULL))
    return NULL;
  uint64_t hash = ((uint64_t) (uintptr_t) from ^ pc) * 0x9e3779b97f4a7c15ULL;
  struct step_cache_entry *entry
      = &step_cache[hash >> (64 - __builtin_ctz (STEP_CACHE_ENTRIES))];
  if (entry->from == from && entry->pc == pc && entry->to != NULL)
    return entry->to;
  const struct fold_node *to = fold_step (table, from, pc, function);
  if (to != NULL)
    {
      entry->from = from;
      entry->pc = pc;
      entry->to = to;
    }
  return to;
}

const struct fold_node *
fold_memo_extend (const struct fold_node *node,
                  const uintptr_t *return_addresses, const uintptr_t *functions,
                  int count, const struct fold_node **nodes)
{
  return fold_memo_extend_inline (node, return_addresses, functions, count,
                                  nodes);
}

struct depot_context *
fold_memo_node_context_made (const struct fold_node *node, int max)
{
  return node_context_made (node, max);
}

struct depot_context *
fold_memo_context (const uintptr_t *whole, const uintptr_t *functions,
                   int count, int max)
{
  struct fold_slot *table = table_get ();
  const struct fold_node *node = NULL;
  int known = (int) last_count, k = 0;

  if (UNLIKELY (table == NULL || count <= 0))
    return NULL;
  if (known > count)
    known = count;
  /* WHOLE is leaf first; K counts frames from the root, ROOT[-K].  Two
     frames a round, one branch for both.  */
  const uintptr_t *root = whole + count - 1;
  const uintptr_t *root_functions = functions + count - 1;
  while (k + 1 < known
         && ((last_frames[k] ^ root[-k]) | (last_frames[k + 1] ^ root[-k - 1]))
                == 0)
    k += 2;
  if (k < known && last_frames[k] == root[-k])
    k++;
  if (k > 0)
    node = last_nodes[k - 1];
  for (; k < count; k++)
    {
      node = fold_step (table, node, root[-k] - 1, root_functions[-k]);
      if (UNLIKELY (node == NULL))
        {
          last_count
              = (uint32_t) (k < LAST_STACK_FRAMES ? k : LAST_STACK_FRAMES);
          return NULL;
        }
      if (k < LAST_STACK_FRAMES)
        {
          last_frames[k] = root[-k];
          last_nodes[k] = node;
        }
    }
  last_count
      = (uint32_t) (count < LAST_STACK_FRAMES ? count : LAST_STACK_FRAMES);
  return node_context (node, max);
}
