/* Call-stack capture.  The runtime's own frames are cut off by finding
   the return address of the interposed entry point (the first frame
   outside the runtime) in the unwound stack; no frame count is assumed,
   so inlining inside the runtime changes nothing.

   unwinder=libunwind unwinds every frame with the DWARF unwind tables;
   unwinder=fp walks frame pointers only; unwinder=fast (the default)
   gives what libunwind gives, faster: it walks the frame-pointer chain
   while each step is known to be exact and hands over to libunwind where
   the chain leaves code with frame pointers (the C library's start-up
   frames, a qsort calling back into the program).

   What is known is learnt per return address, in frame_facts: the
   first time a return address is seen, the whole stack is unwound with
   libunwind and the fast steps are tried against it, frame by frame: a
   frame-pointer step that gave libunwind's next frame is trusted; where
   it did not (a C library function without frame pointers, such as
   strdup, calling malloc), the frame's own unwind rule, learnt by one
   libunwind step (see "Frames without frame pointers" below), is tried,
   and frame pointers go on from the registers it restores; where
   neither does, that frame is the hand-over, where libunwind must take
   over.  If libunwind started there does not give the full unwind's
   frames, that return address always gets a full unwind.  Beyond a
   hand-over, the thread's tail cache (below) gives the frames when the
   registers and the stack memory the tail was unwound from are
   unchanged; otherwise the stack is unwound in full.  Every
   VERIFY_INTERVAL-th fast capture of a thread is checked against a
   full unwind; a return address whose step was once wrong is never
   trusted again.  The plugin keeps frame pointers in the
   code it instruments (-fno-omit-frame-pointer), so most steps are
   frame-pointer steps.  */

#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <pthread.h>
#include <ucontext.h>
#include <string.h>

#include "internal.h"
#include "fold_memo.h"

/* This thread's stack, found once per thread ({1, 1} when unknown).  */
static __thread uintptr_t stack_low,
    stack_high __attribute__ ((tls_model ("initial-exec")));

void
thread_stack_bounds (uintptr_t *low, uintptr_t *high)
{
  if (stack_high == 0)
    {
      pthread_attr_t attributes;
      void *base;
      size_t size;

      stack_low = stack_high = 1;
      /* For the main thread glibc reads /proc/self/maps, with malloc.  */
      in_runtime++;
      if (pthread_getattr_np (pthread_self (), &attributes) == 0)
        {
          if (pthread_attr_getstack (&attributes, &base, &size) == 0)
            {
              stack_low = (uintptr_t) base;
              stack_high = (uintptr_t) base + size;
              publish_thread_stack (stack_low, stack_high);
            }
          pthread_attr_destroy (&attributes);
        }
      in_runtime--;
    }
  *low = stack_low;
  *high = stack_high;
}

/* thread_stack_bounds without a call once they are known: the fast
   capture asks at every allocation.  */
static inline void
known_stack_bounds (uintptr_t *low, uintptr_t *high)
{
  if (LIKELY (stack_high != 0))
    {
      *low = stack_low;
      *high = stack_high;
    }
  else
    thread_stack_bounds (low, high);
}

/* A frame base is inside this thread's stack and aligned.  */
static inline bool
frame_in_stack (const uintptr_t *frame, uintptr_t low, uintptr_t high)
{
  /* Written so that no sum overflows: a frame pointer is any value in
     code without frame pointers.  */
  return (uintptr_t) frame >= low && high >= 2 * sizeof (uintptr_t)
         && (uintptr_t) frame <= high - 2 * sizeof (uintptr_t)
         && ((uintptr_t) frame & (sizeof (uintptr_t) - 1)) == 0;
}

/* Return addresses along the frame-pointer chain, innermost first.  Every
   frame read lies inside this thread's stack, above the previous one, so
   a program built without frame pointers gives a short or odd stack,
   never a fault.  */
static int
walk_frame_pointers (void **frames, int max)
{
  uintptr_t low, high;
  const uintptr_t *frame = __builtin_frame_address (0);
  int count = 0;

  thread_stack_bounds (&low, &high);
  while (count < max && frame_in_stack (frame, low, high))
    {
      const uintptr_t *next = (const uintptr_t *) frame[0];
      if (frame[1] == 0)
        break;
      frames[count++] = (void *) frame[1];
      if (next <= frame)
        break;
      frame = next;
    }
  return count;
}

/* ---- unwinder=fast ---- */

/* What a frame-pointer step from the frame a return address returns
   into gives (the low bits of its frame facts; 0 is not known yet).  */
enum step_verdict
{
  STEP_UNKNOWN = 0,
  STEP_FRAME_POINTER = 1,    /* the caller's frame, as libunwind gives */
  STEP_UNWIND_FROM_HERE = 2, /* wrong; libunwind from this frame is right */
  STEP_FULL_UNWIND = 3,      /* only a full unwind is right */
  STEP_BY_RULE = 4           /* wrong; the frame's learnt rule is right */
};

/* Per return address - 1: its step verdict (the low FACT_VERDICT_BITS),
   and its function's start + 1 above them (0: not looked up yet).  */
static struct pc_map frame_facts;
#define FACT_VERDICT_BITS 3
#define FACT_VERDICT_MASK ((1ULL << FACT_VERDICT_BITS) - 1)

static inline enum step_verdict
verdict_of (uint64_t facts)
{
  return (enum step_verdict) (facts & FACT_VERDICT_MASK);
}

/* The function in FACTS, or 0 when not known yet.  */
static inline uintptr_t
function_in (uint64_t facts)
{
  return facts >> FACT_VERDICT_BITS ? (facts >> FACT_VERDICT_BITS) - 1 : 0;
}

/* Learn VERDICT for RETURN_ADDRESS: STEP_FULL_UNWIND always (a step once
   wrong is never trusted again), the others only over STEP_UNKNOWN.  */
/* Bumped after a known verdict changes (to STEP_FULL_UNWIND): the
   threads' facts memos below are then out of date.  */
static _Atomic uint32_t facts_epoch;

static void
learn_verdict (uintptr_t return_address, enum step_verdict verdict)
{
  if (verdict == STEP_FULL_UNWIND
      && verdict_of (pc_map_get (&frame_facts, return_address - 1))
             == STEP_FULL_UNWIND)
    return;
  if (pc_map_update (&frame_facts, return_address - 1, FACT_VERDICT_MASK,
                     verdict, verdict != STEP_FULL_UNWIND)
      && verdict == STEP_FULL_UNWIND)
    atomic_fetch_add_explicit (&facts_epoch, 1, memory_order_release);
}

/* The thread's memo of frame facts with a known verdict, two-way set
   associative (the newer entry of a set first): the frames of a hot
   stack without a probe of the shared map each.  An entry holds while
   facts_epoch is the one it was made in (a verdict leaves STEP_UNKNOWN
   only once; a known one changes only to STEP_FULL_UNWIND, which bumps
   the epoch).  A function learnt after the entry was made is looked up
   again by its user.  */
#define FACTS_MEMO_SETS 64 /* 2^6: the hash's top 6 bits */
struct facts_memo
{
  uintptr_t pc;
  uint64_t facts;
  uint64_t rule; /* with STEP_BY_RULE: its frame rule */
  uint32_t epoch;
};
static __thread struct facts_memo facts_memo[FACTS_MEMO_SETS][2]
    __attribute__ ((tls_model ("initial-exec")));

/* Per return address - 1 whose frame has no frame pointer: its frame
   rule (below), learnt before its verdict becomes STEP_BY_RULE.  */
static struct pc_map frame_rules;

/* PC's facts and, with STEP_BY_RULE, its frame rule in *RULE.  */
static inline uint64_t
facts_of (uintptr_t pc, uint64_t *rule)
{
  struct facts_memo *set = facts_memo[(pc * 0x9e3779b97f4a7c15ULL) >> 58];
  uint32_t epoch = atomic_load_explicit (&facts_epoch, memory_order_acquire);
  if (set[0].pc == pc && set[0].epoch == epoch)
    {
      *rule = set[0].rule;
      return set[0].facts;
    }
  if (set[1].pc == pc && set[1].epoch == epoch)
    {
      *rule = set[1].rule;
      return set[1].facts;
    }
  uint64_t facts = pc_map_get (&frame_facts, pc);
  *rule
      = verdict_of (facts) == STEP_BY_RULE ? pc_map_get (&frame_rules, pc) : 0;
  if (verdict_of (facts) != STEP_UNKNOWN)
    {
      set[1] = set[0];
      set[0] = (struct facts_memo){ pc, facts, *rule, epoch };
    }
  return facts;
}

static uintptr_t
function_from_unwind_tables (uintptr_t pc)
{
  unw_proc_info_t info;
  if (unw_get_proc_info_by_ip (unw_local_addr_space, pc, &info, NULL) == 0
      && info.start_ip != 0 && info.start_ip <= pc)
    return info.start_ip;
  return pc;
}

uintptr_t
stack_function_of (uintptr_t pc)
{
  uintptr_t function = function_in (pc_map_get (&frame_facts, pc));
  if (function != 0)
    return function;
  function = function_from_unwind_tables (pc);
  pc_map_update (&frame_facts, pc, ~FACT_VERDICT_MASK,
                 ((uint64_t) function + 1) << FACT_VERDICT_BITS, false);
  return function;
}

/* See internal.h.  What was learnt about its return addresses (frame
   facts and rules) is cleared and the threads' memos of them dropped
   (facts_epoch); libunwind forgets its cached frame states there too.  */
_Atomic uint32_t code_forgotten;

void
stack_forget_code (uintptr_t low, uintptr_t high)
{
  fold_memo_forget ();
  atomic_fetch_add_explicit (&code_forgotten, 1, memory_order_release);
  pc_map_forget_range (&frame_facts, low, high);
  pc_map_forget_range (&frame_rules, low, high);
  unw_flush_cache (unw_local_addr_space, low, high);
  atomic_fetch_add_explicit (&facts_epoch, 1, memory_order_release);
}

/* One fast capture in this many is checked against a full unwind.  */
#define VERIFY_INTERVAL 1024
static __thread unsigned fast_captures
    __attribute__ ((tls_model ("initial-exec")));

/* Frames of the runtime's own above the interposed entry point's caller,
   at most.  */
#define RUNTIME_FRAMES_MAX 32

static _Atomic bool per_thread_caching;

/* Where an unwind is between two frames: the return address into the
   next function out, and that function's stack pointer (just above the
   return address) and frame pointer after the return.  */
struct frame_state
{
  uintptr_t return_address;
  uintptr_t sp;
  uintptr_t rbp;
};

/* The state after the return to FRAME[1] from the function whose frame
   base (built with a frame pointer) is FRAME.  */
static inline struct frame_state
state_above (const uintptr_t *frame)
{
  return (struct frame_state){ frame[1], (uintptr_t) (frame + 2), frame[0] };
}

/* For verbosity=1: libunwind steps taken to learn frame rules, and
   (added at each verification, so at least) steps by a learnt rule.  */
static _Atomic uint64_t rule_learning_steps, rule_step_count;
static __thread uint64_t rule_steps
    __attribute__ ((tls_model ("initial-exec")));

/* CURSOR on the frame STATE's return address returns into, started with
   libunwind's per-thread cache; CONTEXT holds its registers.  */
static int
cursor_at (unw_cursor_t *cursor, unw_context_t *context,
           const struct frame_state *state)
{
  if (UNLIKELY (
          !atomic_load_explicit (&per_thread_caching, memory_order_relaxed))
      && !atomic_exchange (&per_thread_caching, true))
    /* libunwind's global cache takes a lock and masks signals (two
       system calls) at every step; a per-thread cache does neither.  */
    unw_set_caching_policy (unw_local_addr_space, UNW_CACHE_PER_THREAD);
  unw_getcontext (context);
  /* Inside the call instruction, as libunwind looks up a caller's pc.  */
  context->uc_mcontext.gregs[REG_RIP] = (greg_t) (state->return_address - 1);
  context->uc_mcontext.gregs[REG_RSP] = (greg_t) state->sp;
  context->uc_mcontext.gregs[REG_RBP] = (greg_t) state->rbp;
  return unw_init_local (cursor, context);
}

/* The callers of the function STATE's return address returns into, by
   libunwind started there.  Appended to OUT[COUNT, MAX); returns the new
   count, and the outermost frame's stack pointer in *LAST_SP.  */
static int
unwind_from (uintptr_t *out, int count, int max,
             const struct frame_state *state, uintptr_t *last_sp)
{
  unw_context_t context;
  unw_cursor_t cursor;

  if (cursor_at (&cursor, &context, state) < 0)
    return -1;
  while (count < max && unw_step (&cursor) > 0)
    {
      unw_word_t ip;
      if (unw_get_reg (&cursor, UNW_REG_IP, &ip) < 0 || ip == 0)
        break;
      out[count++] = (uintptr_t) ip;
    }
  unw_word_t sp = 0;
  unw_get_reg (&cursor, UNW_REG_SP, &sp);
  *last_sp = (uintptr_t) sp;
  return count;
}

/* ---- Frames without frame pointers ----

   A C library function built without frame pointers (strdup, fopen...)
   that calls malloc keeps its caller's frame pointer, so the
   frame-pointer step from its return address skips its caller.  The
   DWARF rule of most such frames at a call is simple: the canonical
   frame address (CFA) is the stack pointer plus a constant, the return
   address is at CFA - 8, and the frame pointer is unchanged or saved at
   a constant offset from the CFA.  Such a rule is learnt per return
   address by one libunwind step (unw_get_save_loc tells where the step
   read the return address and the frame pointer), kept in frame_rules,
   and applied after that without libunwind: a few loads.  A rule is a
   64-bit value: */
#define RULE_KNOWN 1        /* looked up (so never 0) */
#define RULE_USABLE 2       /* simple; otherwise never applied */
#define RULE_END 4          /* the return address is undefined: the end */
#define RULE_RBP_SAVED 8    /* the frame pointer is saved, not unchanged */
#define RULE_CFA_SHIFT 16   /* bits 16-31: CFA - stack pointer, bytes */
#define RULE_RBP_SHIFT 32   /* bits 32-63: the saved frame pointer - CFA */
#define RULE_CFA_MAX 0xfff8 /* the largest CFA offset kept */

/* What one libunwind step from STATE shows of its frame's rule.  */
static uint64_t
rule_by_one_step (const struct frame_state *state)
{
  unw_context_t context;
  unw_cursor_t cursor;
  unw_proc_info_t info;
  unw_word_t cfa, ip, rbp;
  unw_save_loc_t ip_at, rbp_at;

  atomic_fetch_add_explicit (&rule_learning_steps, 1, memory_order_relaxed);
  /* Without unwind information libunwind guesses from frame pointers,
     and a signal frame has a rule of its own: neither is simple.  */
  if (cursor_at (&cursor, &context, state) < 0
      || unw_get_proc_info (&cursor, &info) < 0
      || unw_is_signal_frame (&cursor) > 0)
    return RULE_KNOWN;
  int stepped = unw_step (&cursor);
  if (stepped == 0)
    return RULE_KNOWN | RULE_USABLE | RULE_END;
  if (stepped < 0 || unw_get_reg (&cursor, UNW_REG_SP, &cfa) < 0
      || unw_get_reg (&cursor, UNW_REG_IP, &ip) < 0
      || unw_get_reg (&cursor, UNW_X86_64_RBP, &rbp) < 0
      || unw_get_save_loc (&cursor, UNW_X86_64_RIP, &ip_at) < 0
      || unw_get_save_loc (&cursor, UNW_X86_64_RBP, &rbp_at) < 0)
    return RULE_KNOWN;
  if (cfa <= state->sp || cfa - state->sp > RULE_CFA_MAX
      || (cfa & (sizeof (uintptr_t) - 1)) != 0 || ip_at.type != UNW_SLT_MEMORY
      || ip_at.u.addr != cfa - 8 || ip != *(const uintptr_t *) (cfa - 8)
      || rbp_at.type != UNW_SLT_MEMORY)
    return RULE_KNOWN;
  uint64_t rule = RULE_KNOWN | RULE_USABLE
                  | (uint64_t) (cfa - state->sp) << RULE_CFA_SHIFT;
  /* Unchanged, it is still read from the registers we started from.  */
  if (rbp_at.u.addr == (unw_word_t) &context.uc_mcontext.gregs[REG_RBP])
    return rbp == state->rbp ? rule : RULE_KNOWN;
  if (rbp_at.u.addr < state->sp || rbp_at.u.addr + 8 > cfa
      || rbp != *(const uintptr_t *) rbp_at.u.addr)
    return RULE_KNOWN;
  return rule | RULE_RBP_SAVED
         | (uint64_t) (uint32_t) (int32_t) (rbp_at.u.addr - cfa)
               << RULE_RBP_SHIFT;
}

/* The frame rule of STATE's return address, learnt on first sight.  */
static uint64_t
rule_of (const struct frame_state *state)
{
  uintptr_t pc = state->return_address - 1;
  uint64_t rule = pc_map_get (&frame_rules, pc);
  if (rule == 0)
    {
      rule = rule_by_one_step (state);
      pc_map_set (&frame_rules, pc, rule);
    }
  return rule;
}

/* Step STATE out by the frame-pointer chain; false when the frame
   pointer is no frame of this thread's stack [LOW, HIGH).  */
static inline bool
step_by_frame_pointer (struct frame_state *state, uintptr_t low, uintptr_t high)
{
  const uintptr_t *frame = (const uintptr_t *) state->rbp;
  if (!frame_in_stack (frame, low, high) || (uintptr_t) frame < state->sp)
    return false;
  *state = state_above (frame);
  return true;
}

/* Step STATE out by RULE (usable, not RULE_END); false when what it
   reads is not in this thread's stack [LOW, HIGH).  */
static inline bool
step_by_rule (struct frame_state *state, uint64_t rule, uintptr_t low,
              uintptr_t high)
{
  uintptr_t cfa = state->sp + ((rule >> RULE_CFA_SHIFT) & 0xffff);
  if (state->sp < low || cfa > high)
    return false;
  uintptr_t rbp = state->rbp;
  if (rule & RULE_RBP_SAVED)
    rbp = *(const uintptr_t *) (cfa + (int32_t) (rule >> RULE_RBP_SHIFT));
  *state = (struct frame_state){ ((const uintptr_t *) cfa)[-1], cfa, rbp };
  return true;
}

/* ---- The tail cache ----

   Where a thread's stack leaves code with frame pointers for the last
   time -- the C library's start-up frames under main, or under a
   thread's start routine -- the frames beyond stay the same for as long
   as that frame lives.  The thread keeps the tail a full unwind gave,
   with the state it was unwound from: the return address, stack pointer
   and frame pointer of the hand-over, and a copy of the stack memory the
   unwind of the tail reads (from the stack pointer to beyond the
   outermost frame's stack pointer).  The same registers and the same
   memory give the same unwind, so a tail is reused only when all of
   them are equal.  */

#define TAIL_FRAMES_MAX 16
#define TAIL_MEMORY_MAX 512 /* bytes */
/* Bytes kept beyond the outermost frame's stack pointer.  */
#define TAIL_MARGIN 64

struct tail_cache
{
  struct frame_state state; /* return_address 0: empty */
  uint32_t frame_count;
  uint32_t memory_words;
  uintptr_t frames[TAIL_FRAMES_MAX];
  uintptr_t functions[TAIL_FRAMES_MAX]; /* of frames[i] - 1 */
  uintptr_t memory[TAIL_MEMORY_MAX / sizeof (uintptr_t)];
};

static __thread struct tail_cache tail_cache
    __attribute__ ((tls_model ("initial-exec")));
/* Frames in the thread's last folded walk (below, "The last folded
   walk"); 0: none.  */
static __thread uint32_t walked_count
    __attribute__ ((tls_model ("initial-exec")));

/* Append the cached tail for a hand-over at STATE to OUT[COUNT, MAX); -1
   when it is not cached.  */
static inline __attribute__ ((always_inline)) bool
tail_matches (const struct frame_state *state)
{
  struct tail_cache *tail = &tail_cache;
  return tail->state.return_address == state->return_address
         && tail->state.sp == state->sp && tail->state.rbp == state->rbp
         && memcmp ((const void *) state->sp, tail->memory,
                    tail->memory_words * sizeof (uintptr_t))
                == 0;
}

static inline __attribute__ ((always_inline)) int
tail_from_cache (uintptr_t *out, uintptr_t *functions, int count, int max,
                 const struct frame_state *state)
{
  struct tail_cache *tail = &tail_cache;
  if (count + (int) tail->frame_count > max || !tail_matches (state))
    return -1;
  memcpy (out + count, tail->frames, tail->frame_count * sizeof *out);
  memcpy (functions + count, tail->functions,
          tail->frame_count * sizeof *functions);
  return count + (int) tail->frame_count;
}

/* Keep TAIL (COUNT frames), unwound from a hand-over at STATE, whose
   outermost stack pointer was LAST_SP.  */
static void
tail_remember (const uintptr_t *tail, int count,
               const struct frame_state *state, uintptr_t last_sp)
{
  uintptr_t low, high;
  uintptr_t end = last_sp + TAIL_MARGIN;

  thread_stack_bounds (&low, &high);
  if (end > high)
    end = high;
  tail_cache.state.return_address = 0;
  walked_count = 0; /* its hand-over was to the tail replaced here */
  if (count > TAIL_FRAMES_MAX || last_sp < state->sp
      || end - state->sp > TAIL_MEMORY_MAX)
    return;
  tail_cache.frame_count = (uint32_t) count;
  tail_cache.memory_words = (uint32_t) ((end - state->sp) / sizeof (uintptr_t));
  memcpy (tail_cache.frames, tail, count * sizeof *tail);
  for (int i = 0; i < count; i++)
    tail_cache.functions[i] = stack_function_of (tail[i] - 1);
  memcpy (tail_cache.memory, (const void *) state->sp,
          tail_cache.memory_words * sizeof (uintptr_t));
  tail_cache.state = *state;
}

/* The frame of the runtime's own (built with frame pointers) whose
   return address is CALLER_RETURN, from FRAME out; NULL when not
   found.  With OFFSETS, the distance of each frame on the way from FRAME
   (bytes) is written there, and their number in *COUNT.  */
static const uintptr_t *
runtime_frame_under (const uintptr_t *frame, uintptr_t caller_return,
                     uintptr_t low, uintptr_t high, int32_t *offsets,
                     uint32_t *count)
{
  const uintptr_t *first = frame;
  for (int skipped = 0; skipped <= RUNTIME_FRAMES_MAX; skipped++)
    {
      if (frame == NULL || !frame_in_stack (frame, low, high))
        return NULL;
      if (offsets != NULL)
        {
          offsets[skipped]
              = (int32_t) ((const char *) frame - (const char *) first);
          *count = (uint32_t) skipped + 1;
        }
      if (frame[1] == caller_return)
        return frame;
      const uintptr_t *next = (const uintptr_t *) frame[0];
      if (next <= frame)
        return NULL;
      frame = next;
    }
  return NULL;
}

/* runtime_frame_under without the offsets, for the short walk: the
   frames only grow, so the upper bound is the one checked at each.  */
static inline const uintptr_t *
runtime_frame_of (const uintptr_t *frame, uintptr_t caller_return,
                  uintptr_t low, uintptr_t high)
{
  if (!frame_in_stack (frame, low, high))
    return NULL;
  uintptr_t limit = high - 2 * sizeof (uintptr_t);
  for (int skipped = 0; skipped <= RUNTIME_FRAMES_MAX; skipped++)
    {
      if (frame[1] == caller_return)
        return frame;
      const uintptr_t *next = (const uintptr_t *) frame[0];
      if (next <= frame || (uintptr_t) next > limit
          || ((uintptr_t) next & (sizeof (uintptr_t) - 1)) != 0)
        return NULL;
      frame = next;
    }
  return NULL;
}

__thread const uintptr_t *stack_entry_frame
    __attribute__ ((tls_model ("initial-exec")));

/* The entry point's own frame (STACK_ENTRY_BEGIN), which its path keeps
   while it runs, if it lies above OWN in the stack and returns to
   CALLER_RETURN; NULL when not (docs/internals.md, "The entry's
   frame").  */
static inline const uintptr_t *
entry_frame (const uintptr_t *own, uintptr_t caller_return, uintptr_t high)
{
  const uintptr_t *frame = stack_entry_frame;
  if (frame <= own || (uintptr_t) frame > high - 2 * sizeof (uintptr_t)
      || frame[1] != caller_return)
    return NULL;
  return frame;
}

/* ---- The thread's last chain ----

   A thread's consecutive allocations have most of their stacks in
   common: the frames from the root to the last caller they share.  The
   walk above is a chain of dependent loads (each frame's address is read
   from the frame before it), about 2 ns a frame, so a deep stack costs
   tens of nanoseconds even when nearly all of it is the last one's.

   The thread keeps the last chain it walked: each step's state (return
   address, stack pointer, frame pointer), its function, and the two words
   its step out read, with the values they held.  A step depends on
   nothing but its state, its return address's verdict (and rule) and the
   words it reads; verdicts and rules change only with facts_epoch, and
   the chain is dropped when it changes.  So when a new walk reaches a
   state equal to one of the chain's, and every word the chain's steps
   from there out read still holds its value, the walk from there would
   step through exactly the chain's states: its frames are the chain's.
   The check reads one known address a word, independent loads that the
   processor overlaps, instead of a dependent chain.  Equal frame
   addresses and return addresses alone would prove nothing (a function
   returned and called again from another caller at the same depth leaves
   both); the words read above them do, as the walk itself reads them.

   The chain is kept leaf first, one array a field, at the end of the
   arrays: positions [CHAIN_FRAMES - chain_length, CHAIN_FRAMES).  A walk
   writes its own steps from position 0 up, so the old chain's positions
   at and above the walk's count are intact while it searches them for a
   join.  A chain cut at MAX or ended in a full unwind is not kept.  */

#define CHAIN_FRAMES 256 /* PROGRAM_FRAMES_MAX */
/* A stack is captured by the chain when the thread's last one had at
   least this many frames, and walked as before (runtime_frame_under,
   walk) when not: on shorter stacks (binary trees and the JSON tree of
   make bench, 9 to 12 frames) keeping a chain and checking it cost about
   what the walk costs; from about 25 frames it costs less.  */
#define CHAIN_FRAMES_MIN STACK_CHAIN_FRAMES_MIN

/* Each position's state (its return address is the frame captured) and
   its function as captured (0: not looked up yet).  A frame-pointer step
   out from position I read the frame at chain[I].rbp: chain[I + 1].rbp
   and chain[I + 1].return_address.  A step by a frame rule (CHAIN_BY_RULE
   set in chain[I].sp, aligned) read chain[I + 1].return_address at
   chain_read_return[I], and the word at chain_read_rbp[I] was
   chain_rbp_read[I]: the saved frame pointer chain[I + 1].rbp, or when
   the rule keeps the frame pointer, the return address read again.  */
struct chain_frame
{
  uintptr_t return_address, sp, rbp, function;
};
#define CHAIN_BY_RULE 1
static __thread struct chain_frame chain[CHAIN_FRAMES]
    __attribute__ ((tls_model ("initial-exec")));
static __thread const uintptr_t *chain_read_return[CHAIN_FRAMES],
    *chain_read_rbp[CHAIN_FRAMES] __attribute__ ((tls_model ("initial-exec")));
static __thread uintptr_t chain_rbp_read[CHAIN_FRAMES]
    __attribute__ ((tls_model ("initial-exec")));

/* How the chain's outermost step ended the walk.  */
enum chain_end
{
  CHAIN_END_OF_STACK, /* its rule says the return address is undefined */
  CHAIN_HAND_OVER     /* to the tail cache */
};

static __thread uint32_t chain_length,
    chain_epoch __attribute__ ((tls_model ("initial-exec")));
static __thread uint8_t chain_end __attribute__ ((tls_model ("initial-exec")));
/* The chain's steps at positions below it are frame-pointer steps.  */
static __thread int chain_first_rule
    __attribute__ ((tls_model ("initial-exec")));
/* For verbosity=1: walks joined to the last chain, and the frames the
   joins gave (added at each verification, so at least).  */
static _Atomic uint64_t chain_join_count, chain_frame_count;
static __thread uint64_t chain_joins,
    chain_frames __attribute__ ((tls_model ("initial-exec")));

/* The runtime's frames from the capture's own frame to the one whose
   return address is the caller's, as byte offsets from the own frame
   (the first is 0): the same functions call each other at every
   allocation, so the frames lie at the same distances.  */
static __thread int32_t runtime_offsets[RUNTIME_FRAMES_MAX + 1]
    __attribute__ ((tls_model ("initial-exec")));
static __thread uint32_t runtime_frame_count
    __attribute__ ((tls_model ("initial-exec")));

/* The frame of the runtime's own above OWN whose return address is
   CALLER_RETURN, as runtime_frame_under finds it, if it is where it was
   last time: every frame on the way holds the next one's address and a
   return address other than CALLER_RETURN, the last one CALLER_RETURN.
   NULL when not.  */
static inline const uintptr_t *
runtime_frame_again (const uintptr_t *own, uintptr_t caller_return,
                     uintptr_t low, uintptr_t high)
{
  uint32_t count = runtime_frame_count;
  if (count == 0)
    return NULL;
  const char *base = (const char *) own;
  const uintptr_t *found
      = (const uintptr_t *) (base + runtime_offsets[count - 1]);
  /* The offsets grow: the first and the last frame bound the others.  */
  if (!frame_in_stack (own, low, high) || !frame_in_stack (found, low, high))
    return NULL;
  bool same = found[1] == caller_return;
  for (uint32_t i = 0; i + 1 < count; i++)
    {
      const uintptr_t *frame = (const uintptr_t *) (base + runtime_offsets[i]);
      same &= (frame[0] == (uintptr_t) (base + runtime_offsets[i + 1]))
              & (frame[1] != caller_return);
    }
  return same ? found : NULL;
}

/* runtime_frame_under from OWN, remembering the frames on the way for
   runtime_frame_again.  */
static const uintptr_t *
runtime_frame_remembered (const uintptr_t *own, uintptr_t caller_return,
                          uintptr_t low, uintptr_t high)
{
  const uintptr_t *found = runtime_frame_under (
      own, caller_return, low, high, runtime_offsets, &runtime_frame_count);
  if (found == NULL)
    runtime_frame_count = 0;
  return found;
}

/* Move the walk's positions [0, COUNT) to just under position TO (at or
   above COUNT), the last first: a few positions, not worth a call.  */
static inline void
chain_move (int count, int to, bool by_rule)
{
  int at = to - count;
  if (at == 0)
    return;
  for (int i = count - 1; i >= 0; i--)
    {
      chain[at + i] = chain[i];
    }
  if (by_rule)
    for (int i = count - 1; i >= 0; i--)
      {
        chain_read_return[at + i] = chain_read_return[i];
        chain_read_rbp[at + i] = chain_read_rbp[i];
        chain_rbp_read[at + i] = chain_rbp_read[i];
      }
}

/* Keep the walk's COUNT positions as the chain, ended by END; the first
   step by a rule was at WALK_FIRST_RULE (-1: none).  */
static inline void
chain_keep (int count, enum chain_end end, int walk_first_rule)
{
  if (count < CHAIN_FRAMES_MIN)
    {
      chain_length = 0;
      return;
    }
  chain_move (count, CHAIN_FRAMES, walk_first_rule >= 0);
  chain_first_rule = walk_first_rule >= 0
                         ? CHAIN_FRAMES - count + walk_first_rule
                         : CHAIN_FRAMES;
  chain_length = (uint32_t) count;
  chain_end = (uint8_t) end;
}

/* The walk's state at OUT[COUNT) is the chain's at JOIN: if every frame
   the chain's steps from JOIN out read holds what it held, append their
   frames to OUT and FUNCTIONS and give the new count (or -1 when the tail
   is not cached), the walk's COUNT positions and the chain's from JOIN the
   new chain; -2 when MAX would cut the chain, or when a word changed, the
   outermost step that read one in *CHANGED_AT.  */
static inline int
chain_join (uintptr_t *out, uintptr_t *functions, int count, int max, int join,
            int walk_first_rule, int *changed_at)
{
  int kept = CHAIN_FRAMES - join;
  if (count + kept > max)
    return -2;
  /* Frame-pointer steps up to the first by a rule; the frames are copied
     to OUT on the way, whatever the outcome (OUT beyond COUNT is free).  */
  int rules_from = chain_first_rule > join ? chain_first_rule : join;
  int frame_pointers_end
      = rules_from < CHAIN_FRAMES - 1 ? rules_from : CHAIN_FRAMES - 1;
  int changed = -1;
  uintptr_t *to = out + count - join, *functions_to = functions + count - join;
  int i;
  for (i = join; i < frame_pointers_end; i++)
    {
      const uintptr_t *frame = (const uintptr_t *) chain[i].rbp;
      if ((frame[0] ^ chain[i + 1].rbp)
          | (frame[1] ^ chain[i + 1].return_address))
        changed = i;
      /* Opaque to GCC: a loop of copies would become a memcpy call.  */
      __asm__("" : "+r"(to));
      to[i] = chain[i].return_address;
      functions_to[i] = chain[i].function;
    }
  for (; i < CHAIN_FRAMES; i++)
    {
      if (i + 1 == CHAIN_FRAMES)
        ;
      else if (!(chain[i].sp & CHAIN_BY_RULE))
        {
          const uintptr_t *frame = (const uintptr_t *) chain[i].rbp;
          if ((frame[0] ^ chain[i + 1].rbp)
              | (frame[1] ^ chain[i + 1].return_address))
            changed = i;
        }
      else if ((*chain_read_return[i] ^ chain[i + 1].return_address)
               | (*chain_read_rbp[i] ^ chain_rbp_read[i]))
        changed = i;
      to[i] = chain[i].return_address;
      functions_to[i] = chain[i].function;
    }
  if (changed >= 0)
    {
      *changed_at = changed;
      return -2;
    }
  bool by_rule = walk_first_rule >= 0;
  chain_first_rule = by_rule ? join - count + walk_first_rule : rules_from;
  chain_move (count, join, by_rule);
  chain_length = (uint32_t) (count + kept);
  chain_joins++;
  chain_frames += (uint64_t) kept;
  count += kept;
  if (chain_end == CHAIN_HAND_OVER)
    {
      struct frame_state outermost
          = { chain[CHAIN_FRAMES - 1].return_address,
              chain[CHAIN_FRAMES - 1].sp, chain[CHAIN_FRAMES - 1].rbp };
      return tail_from_cache (out, functions, count, max, &outermost);
    }
  return count;
}

/* ---- The thread's hot frames ----

   The short walk below looks each return address up once, in a small
   two-way set associative table of the thread's (HOT_FRAMES sets, the
   newer entry first, no epoch per entry): a return address whose step is known to be a frame-pointer
   step or a usable frame rule, with its function, so that the hot case
   is one probe and a load or two.  An entry is made from the verdict
   facts_of gives; the whole table is dropped when facts_epoch changes
   (checked once per capture), as a verdict then may have become
   STEP_FULL_UNWIND.  Anything else (no entry, another verdict) takes
   facts_of's way, as before.  */
#define HOT_FRAMES 64 /* 2^6: the hash's top 6 bits; two ways */
struct hot_frame
{
  uintptr_t return_address; /* HOT_FRAME_EMPTY: empty */
  uintptr_t function;       /* 0: not known */
  uint64_t rule;            /* 0: a frame-pointer step; else its rule */
  uint64_t unused;
};
static __thread struct hot_frame hot_frames[HOT_FRAMES][2]
    __attribute__ ((tls_model ("initial-exec"), aligned (64)));
/* facts_epoch + 1 when the table was emptied; 0: never.  */
static __thread uint32_t hot_frames_epoch
    __attribute__ ((tls_model ("initial-exec")));
/* Not 0, which ends a frame-pointer chain and would match zeroed
   entries: no return address a verified step reads is all ones.  */
#define HOT_FRAME_EMPTY UINTPTR_MAX

static inline struct hot_frame *
hot_frame_set (uintptr_t return_address)
{
  return hot_frames[(return_address * 0x9e3779b97f4a7c15ULL) >> 58];
}

/* The table, emptied when a verdict changed since it was filled.  */
static inline void
hot_frames_check_epoch (void)
{
  uint32_t epoch
      = atomic_load_explicit (&facts_epoch, memory_order_acquire) + 1;
  if (UNLIKELY (hot_frames_epoch != epoch))
    {
      for (int set = 0; set < HOT_FRAMES; set++)
        hot_frames[set][0].return_address = hot_frames[set][1].return_address
            = HOT_FRAME_EMPTY;
      hot_frames_epoch = epoch;
    }
}

/* Keep what FACTS (and RULE) say of RETURN_ADDRESS's step, if the table
   can hold it (a frame-pointer step or a usable rule); whether it did.  */
static bool
hot_frame_learn (uintptr_t return_address, uint64_t facts, uint64_t rule)
{
  enum step_verdict verdict = verdict_of (facts);
  if (verdict == STEP_BY_RULE)
    {
      if ((rule & RULE_USABLE) == 0)
        return false;
    }
  else if (verdict != STEP_FRAME_POINTER)
    return false;
  struct hot_frame *set = hot_frame_set (return_address);
  set[1] = set[0];
  set[0] = (struct hot_frame){ return_address, function_in (facts),
                               verdict == STEP_FRAME_POINTER ? 0 : rule, 0 };
  return true;
}

/* What hot_step did.  */
enum hot_step
{
  HOT_STEPPED,   /* out of the frame, into *STATE */
  HOT_END,       /* the frame's rule ends the stack */
  HOT_HAND_OVER, /* the frame hands over to the tail cache; STATE kept */
  HOT_LEARNT,    /* nothing: the frame is now in the table, step again */
  HOT_UNKNOWN    /* the step is not known: a full unwind's work */
};

/* One step of the short walk out of the frame *STATE's return address
   returns into, by the thread's hot frames (TABLE), or by facts_of where
   the table does not hold it.  Except with HOT_LEARNT and HOT_UNKNOWN,
   the frame's function (0: not known) is in *FUNCTION; with HOT_STEPPED,
   READ[0] and READ[1] are the two words the step read: the one that
   became the return address, and the one that became the frame pointer
   (the first again when the step keeps the frame pointer).  */
static inline __attribute__ ((always_inline)) enum hot_step
    hot_step (struct hot_frame (*table)[2], struct frame_state *state,
              uintptr_t *function, const uintptr_t **read, uintptr_t low,
              uintptr_t high, uintptr_t limit)
{
  const struct hot_frame *hot
      = table[(state->return_address * 0x9e3779b97f4a7c15ULL) >> 58];
  if (LIKELY (hot->return_address == state->return_address)
      || (++hot)->return_address == state->return_address)
    {
      *function = hot->function;
      uint64_t hot_rule = hot->rule;
      if (LIKELY (hot_rule == 0))
        {
          /* step_by_frame_pointer, with the bounds that state->sp (never
             below LOW) and LIMIT already give.  */
          const uintptr_t *frame = (const uintptr_t *) state->rbp;
          if ((uintptr_t) frame < state->sp || (uintptr_t) frame > limit
              || ((uintptr_t) frame & (sizeof (uintptr_t) - 1)) != 0)
            return HOT_UNKNOWN;
          read[0] = frame + 1;
          read[1] = frame;
          *state = state_above (frame);
          return HOT_STEPPED;
        }
      if (hot_rule & RULE_END)
        return HOT_END;
      if (!step_by_rule (state, hot_rule, low, high))
        return HOT_UNKNOWN;
      read[0] = (const uintptr_t *) state->sp - 1;
      read[1]
          = hot_rule & RULE_RBP_SAVED
                ? (const uintptr_t *) (state->sp
                                       + (int32_t) (hot_rule >> RULE_RBP_SHIFT))
                : read[0];
      rule_steps++;
      return HOT_STEPPED;
    }
  uint64_t rule;
  uint64_t facts = facts_of (state->return_address - 1, &rule);
  /* A frame-pointer step or a usable rule is now a hot frame: the next
     round takes it from the table.  */
  if (hot_frame_learn (state->return_address, facts, rule))
    return HOT_LEARNT;
  if (verdict_of (facts) != STEP_UNWIND_FROM_HERE)
    return HOT_UNKNOWN;
  *function = function_in (facts);
  return HOT_HAND_OVER;
}

/* The table of hot frames for a walk, emptied when a verdict changed,
   its address computed once (from the thread pointer), not at each
   frame.  */
#define HOT_FRAMES_FOR_WALK(table)                                             \
  hot_frames_check_epoch ();                                                   \
  struct hot_frame (*table)[2] = hot_frames;                                   \
  __asm__("" : "+r"(table)) /* kept in a register, not recomputed */

/* The frames from STATE outwards into OUT (at most MAX), by frame
   pointers and frame rules where the verdicts allow it, with no chain:
   for short stacks.  */
static int
walk (uintptr_t *out, uintptr_t *functions, int max, struct frame_state state,
      uintptr_t low, uintptr_t high)
{
  /* A long, so that it indexes both arrays with no sign extension.  */
  long count = 0;
  /* STATE.sp is in the stack (from a frame there), and every step keeps
     it there and makes it grow.  */
  if (state.sp < low || high < 2 * sizeof (uintptr_t))
    return -1;
  uintptr_t limit = high - 2 * sizeof (uintptr_t);
  HOT_FRAMES_FOR_WALK (table);
  for (;;)
    {
      if (count == max)
        return (int) count;
      uintptr_t return_address = state.return_address, function;
      const uintptr_t *read[2];
      enum hot_step step
          = hot_step (table, &state, &function, read, low, high, limit);
      if (step == HOT_LEARNT)
        continue;
      if (UNLIKELY (step == HOT_UNKNOWN))
        return -1;
      functions[count] = function;
      out[count++] = return_address;
      if (LIKELY (step == HOT_STEPPED))
        continue;
      if (step == HOT_END)
        return (int) count;
      return tail_from_cache (out, functions, (int) count, max, &state);
    }
}

/* The depth of the thread's last stack: the next one is walked with the
   chain when it was deep, by walk when not.  */
__thread int stack_last_depth __attribute__ ((tls_model ("initial-exec")));

static __attribute__ ((noinline)) int
capture_by_chain (uintptr_t *out, uintptr_t *functions, int max,
                  uintptr_t caller_return);

/* The return addresses from CALLER_RETURN outwards into OUT (at most
   MAX), by frame pointers and frame rules where the verdicts allow it,
   and from where it joins the thread's last chain, by the chain; -1 when
   a return address is not known yet or needs a full unwind.  */
static int
capture_fast (uintptr_t *out, uintptr_t *functions, int max,
              uintptr_t caller_return)
{
  int count;
  if (stack_last_depth < CHAIN_FRAMES_MIN)
    {
      uintptr_t low, high;
      chain_length = runtime_frame_count = 0;
      known_stack_bounds (&low, &high);
      const uintptr_t *own = __builtin_frame_address (0);
      const uintptr_t *frame = entry_frame (own, caller_return, high);
      if (frame == NULL)
        frame = runtime_frame_of (own, caller_return, low, high);
      count = frame != NULL
                  ? walk (out, functions, max, state_above (frame), low, high)
                  : -1;
    }
  else
    count = capture_by_chain (out, functions, max, caller_return);
  if (count >= 0)
    stack_last_depth = count;
  return count;
}

static __attribute__ ((noinline)) int
capture_by_chain (uintptr_t *out, uintptr_t *functions, int max,
                  uintptr_t caller_return)
{
  uintptr_t low, high;
  int count = 0;

  known_stack_bounds (&low, &high);
  const uintptr_t *own = __builtin_frame_address (0);
  const uintptr_t *frame = entry_frame (own, caller_return, high);
  if (frame == NULL)
    frame = runtime_frame_again (own, caller_return, low, high);
  if (frame == NULL)
    {
      frame = runtime_frame_remembered (own, caller_return, low, high);
      if (frame == NULL)
        return -1;
    }
  struct frame_state state = state_above (frame);
  uint32_t epoch = atomic_load_explicit (&facts_epoch, memory_order_acquire);
  if (chain_epoch != epoch)
    {
      chain_length = 0;
      chain_epoch = epoch;
    }
  /* The chain's positions from JOIN up are intact and not yet passed.  */
  int join = CHAIN_FRAMES - (int) chain_length;
  int first_rule = -1; /* the walk's first step by a rule */
  struct chain_frame *walked = chain;
  for (;;)
    {
      if (count == max)
        break;
      if (join < CHAIN_FRAMES)
        {
          if (join < count)
            join = count;
          while (join < CHAIN_FRAMES && walked[join].sp < state.sp)
            join++;
          if (join < CHAIN_FRAMES && walked[join].sp == state.sp
              && walked[join].return_address == state.return_address
              && walked[join].rbp == state.rbp)
            {
              int changed_at = CHAIN_FRAMES - 1;
              int joined = chain_join (out, functions, count, max, join,
                                       first_rule, &changed_at);
              if (joined != -2)
                return joined;
              /* Walk on: the chain may join again beyond the step whose
                 words changed.  */
              join = changed_at + 1;
            }
        }
      uint64_t rule;
      uint64_t facts = facts_of (state.return_address - 1, &rule);
      uintptr_t function = function_in (facts);
      walked[count] = (struct chain_frame){ state.return_address, state.sp,
                                            state.rbp, function };
      functions[count] = function;
      out[count++] = state.return_address;
      switch (verdict_of (facts))
        {
        case STEP_FRAME_POINTER:
          if (!step_by_frame_pointer (&state, low, high))
            goto unknown;
          break;
        case STEP_BY_RULE:
          /* A rule the full map could not keep is not known here.  */
          if (!(rule & RULE_USABLE))
            goto unknown;
          if (rule & RULE_END)
            {
              chain_keep (count, CHAIN_END_OF_STACK, first_rule);
              return count;
            }
          if (!step_by_rule (&state, rule, low, high))
            goto unknown;
          walked[count - 1].sp |= CHAIN_BY_RULE;
          if (first_rule < 0)
            first_rule = count - 1;
          chain_read_return[count - 1] = (const uintptr_t *) state.sp - 1;
          chain_read_rbp[count - 1]
              = rule & RULE_RBP_SAVED
                    ? (const uintptr_t *) (state.sp
                                           + (int32_t) (rule >> RULE_RBP_SHIFT))
                    : chain_read_return[count - 1];
          chain_rbp_read[count - 1] = *chain_read_rbp[count - 1];
          rule_steps++;
          break;
        case STEP_UNWIND_FROM_HERE:
          chain_keep (count, CHAIN_HAND_OVER, first_rule);
          return tail_from_cache (out, functions, count, max, &state);
        default:
          goto unknown;
        }
    }
  chain_length = 0;
  return count;
unknown:
  chain_length = 0;
  return -1;
}

/* ---- The last folded walk ----

   With fold_recursion, an allocation needs its stack only to find the
   fold memo's node for it (fold_memo.c): the list of frames the fold
   keeps, found by stepping from the root.  The thread keeps its last
   walk root first (up to WALKED_MAX frames), each frame with its state
   (return address, stack pointer, frame pointer), the two words the
   step out of it read and the values they held, and the fold memo's
   node after it.  A new
   walk goes leaf first as walk does, and at each state looks for the
   last walk's frame at the same stack pointer; when the states are
   equal and every word the last walk's steps from there out read still
   holds what it held (and, for a walk handed over to the tail cache,
   the tail still matches), the walk from that state would step through
   exactly the last walk's frames, as in the thread's last chain above:
   the node of that frame is the fold of everything from it to the root.
   Only the new frames are then stepped in the memo, rootwards to
   leafwards, and nothing is compared root first any more.  Equal states
   alone would prove nothing (a function returned and called again at
   the same depth from another caller leaves the same frame and return
   address near the leaf; testsuite/stacks/reentry.c); the words read
   outwards of the join do.  Verdicts and rules are those of facts_epoch,
   which drops the walk when it changes; tail_remember drops it too.  */

/* Frames kept at most; deeper stacks go the way of stack_capture_raw
   (the thread's last chain).  As many as a raw capture takes, so that a
   stack the folded walk gives up on is one capture_fast counts as deep
   as that, and stack_last_depth keeps the next ones off this way.  */
#define WALKED_MAX STACK_CAPTURE_MAX

struct walked_frame
{
  struct frame_state state;     /* tail frames: sp all ones */
  const struct fold_node *node; /* the fold from the root to here */
  const uintptr_t *read[2];     /* what the step out of it read */
  uintptr_t value[2];           /* and found there */
};

/* Root first from walked[1] (walked[0] is a sentinel, its stack pointer
   all ones, as are the tail's, so that the search for a join stops
   there): positions [0, walked_states_from) are the tail cache's frames
   (no state), walked_states_from the hand-over (walked_hand_over) or the
   frame whose rule ended the stack.  */
static __thread struct walked_frame walked[1 + WALKED_MAX]
    __attribute__ ((tls_model ("initial-exec"), aligned (64)));
static __thread uint32_t walked_states_from,
    walked_epoch __attribute__ ((tls_model ("initial-exec")));
static __thread bool walked_hand_over
    __attribute__ ((tls_model ("initial-exec")));
/* New frames a walk keeps on the program's stack (5 KiB); a walk with
   more before it joins the last one starts again with room for
   WALKED_MAX in walked_fresh.  */
#define WALKED_FRESH_ON_STACK 64
/* The new frames of such a walk, leaf first: their states and words
   read, return addresses, functions and nodes.  In the thread's storage,
   not the program's stack (WALKED_MAX frames are 23 KiB, too much for a
   small thread stack); no capture runs inside another on a thread
   (in_runtime).  Only there: kept out of the short walk, whose loop has
   no register to spare for its address (+9 instructions an allocation on
   binary_trees).  */
static __thread struct
{
  struct walked_frame frames[WALKED_MAX];
  uintptr_t return_addresses[WALKED_MAX], functions[WALKED_MAX];
  const struct fold_node *nodes[WALKED_MAX];
} walked_fresh __attribute__ ((tls_model ("initial-exec"), aligned (64)));
/* For verbosity=1: walks joined to the last folded walk (added at each
   verification, so at least).  */
static _Atomic uint64_t walked_join_count;
static __thread uint64_t walked_joins
    __attribute__ ((tls_model ("initial-exec")));
/* What a step that reads nothing (the last one) is taken to read.  */
static const uintptr_t nothing_read;

/* Not 0 when a word the step out of the last walk's frame at I read has
   changed.  */
#define WALKED_CHANGED(last, i)                                                \
  ((*(last)[i].read[0] ^ (last)[i].value[0])                                   \
   | (*(last)[i].read[1] ^ (last)[i].value[1]))

/* Frames to check from which they are checked four a round, out of the
   short walk's line (a deep stack checks about a hundred; inline, the
   rounds cost the short walk's registers: +19 instructions an allocation
   on binary_trees).  */
#define WALKED_CHECK_DEEP 16

/* Not 0 when a word the steps out of the last walk's frames in
   [STATES_FROM, JOIN] read has changed: four frames a round, no early
   exit (the words nearly always hold).  */
static __attribute__ ((noinline)) uintptr_t
walked_changed_deep (const struct walked_frame *last, int join, int states_from)
{
  uintptr_t changed = 0;
  int i = join;
  for (; i - 3 >= states_from; i -= 4)
    changed |= WALKED_CHANGED (last, i) | WALKED_CHANGED (last, i - 1)
               | WALKED_CHANGED (last, i - 2) | WALKED_CHANGED (last, i - 3);
  for (; i >= states_from; i--)
    changed |= WALKED_CHANGED (last, i);
  return changed;
}

/* Does every word the last walk's steps from position JOIN outwards read
   hold what it held, and the tail, if any, still match?  */
static inline bool
walked_unchanged (const struct walked_frame *last, int join, int states_from)
{
  uintptr_t changed = 0;
  if (UNLIKELY (join - states_from >= WALKED_CHECK_DEEP))
    changed = walked_changed_deep (last, join, states_from);
  else
    for (int i = join; i >= states_from; i--)
      changed |= WALKED_CHANGED (last, i);
  if (changed != 0)
    return false;
  return !walked_hand_over || tail_matches (&last[states_from].state);
}

/* After walked_unchanged said no: the outermost position in [STATES_FROM,
   JOIN] whose step read a word that changed, so that only positions
   below it may still join; -1 when none did (the tail changed).  */
static __attribute__ ((noinline)) int
walked_outermost_change (const struct walked_frame *last, int join,
                         int states_from)
{
  for (int i = states_from; i <= join; i++)
    if (*last[i].read[0] != last[i].value[0]
        || *last[i].read[1] != last[i].value[1])
      return i;
  return -1;
}

/* stack_capture_folded with room for WALKED_FRESH_ON_STACK new frames on
   the program's stack, or with DEEP for WALKED_MAX in walked_fresh; *FULL
   set when a walk needed more (nothing is kept then).  */
static inline __attribute__ ((always_inline)) struct depot_context *
folded_walk (int max, uintptr_t caller_return, bool deep, bool *full)
{
  /* The new frames, leaf first, their return addresses and functions:
     arrays of this frame's unless DEEP (a constant once inlined, so that
     the short walk indexes them from the stack pointer, as before).  */
  struct walked_frame on_stack[WALKED_FRESH_ON_STACK];
  uintptr_t return_addresses_on_stack[WALKED_FRESH_ON_STACK],
      functions_on_stack[WALKED_FRESH_ON_STACK];
  const struct fold_node *nodes_on_stack[WALKED_FRESH_ON_STACK];
  struct walked_frame *fresh = deep ? walked_fresh.frames : on_stack;
  uintptr_t *return_addresses
      = deep ? walked_fresh.return_addresses : return_addresses_on_stack;
  uintptr_t *functions = deep ? walked_fresh.functions : functions_on_stack;
  const struct fold_node **nodes = deep ? walked_fresh.nodes : nodes_on_stack;
  int fresh_max = deep ? WALKED_MAX : WALKED_FRESH_ON_STACK;
  uintptr_t low, high;
  known_stack_bounds (&low, &high);
  const uintptr_t *own = __builtin_frame_address (0);
  const uintptr_t *frame = entry_frame (own, caller_return, high);
  if (frame == NULL)
    frame = runtime_frame_of (own, caller_return, low, high);
  if (frame == NULL || high < 2 * sizeof (uintptr_t))
    return NULL;
  struct frame_state state = state_above (frame);
  if (state.sp < low)
    return NULL;
  uintptr_t limit = high - 2 * sizeof (uintptr_t);
  uint32_t epoch
      = atomic_load_explicit (&facts_epoch, memory_order_acquire) + 1;
  /* The hot frames are checked against facts_epoch only with the walk:
     once the walk is of this epoch, so is the table, which was checked
     then and since then can only have been emptied for this epoch.  */
  if (UNLIKELY (walked_epoch != epoch))
    {
      walked_count = 0;
      walked_epoch = epoch;
      walked[0].state.sp = UINTPTR_MAX;
      hot_frames_check_epoch ();
    }
  struct hot_frame (*table)[2] = hot_frames;
  __asm__("" : "+r"(table)); /* kept in a register, not recomputed */
  /* The last walk, its address computed once as the table's.  */
  struct walked_frame *last = walked + 1;
  __asm__("" : "+r"(last));
  int last_states_from = (int) walked_states_from;

  int count = 0, join, states_from = 0;
  /* The last walk's frame where a join is looked for (by its address: no
     index to scale at each look), and its stack pointer: a state below
     it joins nothing.  */
  const struct walked_frame *join_at = last + (int) walked_count - 1;
  bool hand_over = false, joined = false;
  for (;;)
    {
      /* The last walk's frame at or beyond STATE's stack pointer: two
         steps peeled off the loop (GCC gives each its own branch, which
         the predictor learns apart from the loop's: a DFS's next stack
         has about as many frames as its last, so one or two steps
         nearly always do), the loop for the rest.  Then one branch for
         the three words of the state, not one for each: whether the
         frame at the same stack pointer returns to the same address is
         what a recursion changes from one allocation to the next, and a
         branch on it alone was mispredicted about once an allocation
         (valgrind's branch simulation).  Forcing the two steps to be
         branchless (a setb each) made binary_trees 1.07x slower.  */
      join_at -= join_at->state.sp < state.sp;
      join_at -= join_at->state.sp < state.sp;
      while (UNLIKELY (join_at->state.sp < state.sp))
        join_at--;
      if (((join_at->state.sp ^ state.sp)
           | (join_at->state.return_address ^ state.return_address)
           | (join_at->state.rbp ^ state.rbp))
          == 0)
        {
          join = (int) (join_at - last);
          if (LIKELY (walked_unchanged (last, join, last_states_from)))
            {
              joined = true;
              break;
            }
          /* Walk on: the walk may join beyond the change.  */
          int changed = walked_outermost_change (last, join, last_states_from);
          join_at = last + (changed >= 0 ? changed - 1 : -1);
        }
      if (count == fresh_max)
        {
          *full = true;
          return NULL;
        }
      struct walked_frame *new_frame = &fresh[count];
      new_frame->state = state;
      return_addresses[count] = state.return_address;
      enum hot_step step = hot_step (table, &state, &functions[count],
                                     new_frame->read, low, high, limit);
      if (step == HOT_LEARNT)
        continue;
      if (UNLIKELY (step == HOT_UNKNOWN))
        return NULL;
      count++;
      if (LIKELY (step == HOT_STEPPED))
        {
          new_frame->value[0] = *new_frame->read[0];
          new_frame->value[1] = *new_frame->read[1];
          continue;
        }
      new_frame->read[0] = new_frame->read[1] = &nothing_read;
      new_frame->value[0] = new_frame->value[1] = 0;
      hand_over = step == HOT_HAND_OVER;
      break;
    }

  /* From the root: the last walk's frames up to JOIN, or when none
     joined, the tail's (if handed over to it); then the new ones.  */
  const struct fold_node *node = NULL;
  const struct fold_node *tail_nodes[TAIL_FRAMES_MAX];
  if (joined)
    node = last[join].node;
  else if (hand_over)
    {
      if (!tail_matches (&fresh[count - 1].state)
          || tail_cache.frame_count + (uint32_t) count > WALKED_MAX)
        return NULL;
      states_from = (int) tail_cache.frame_count;
      node = fold_memo_extend (NULL, tail_cache.frames, tail_cache.functions,
                               states_from, tail_nodes);
      if (node == NULL && states_from > 0)
        return NULL;
    }
  int base = joined ? join + 1 : states_from;
  if (base + count > WALKED_MAX)
    return NULL;
  if (count > 0)
    node = fold_memo_extend_inline (node, return_addresses, functions, count,
                                    nodes);
  if (node == NULL)
    return NULL;

  /* Keep this walk for the next.  */
  if (!joined)
    {
      for (int k = 0; k < states_from; k++)
        {
          last[k].state.sp = UINTPTR_MAX;
          last[k].node = tail_nodes[states_from - 1 - k];
        }
      walked_states_from = (uint32_t) states_from;
      walked_hand_over = hand_over;
    }
  for (int i = count - 1, k = base; i >= 0; i--, k++)
    {
      last[k] = fresh[i];
      last[k].node = nodes[i];
    }
  walked_count = (uint32_t) (base + count);
  walked_joins += joined;
  stack_last_depth = (int) walked_count;
  fast_captures++;
  chain_length = runtime_frame_count = 0;
  return fold_memo_node_context (node, max);
}

/* A walk with more new frames than the program's stack keeps them for.  */
static __attribute__ ((noinline)) struct depot_context *
folded_walk_deep (int max, uintptr_t caller_return)
{
  bool full = false;
  return folded_walk (max, caller_return, true, &full);
}

struct depot_context *
stack_capture_folded (int max, uintptr_t caller_return)
{
  const char *unwinder = runtime_options.unwinder;
  /* Callers send stacks of WALKED_MAX frames or more the other way
     (stack_last_depth: context_capture, context_capture_counted).  */
  if (!(unwinder[0] == 'f' && unwinder[1] == 'a')
      /* The next fast capture is checked against a full unwind: the
         other way, which counts it.  */
      || (fast_captures + 1) % VERIFY_INTERVAL == 0)
    return NULL;
  bool full = false;
  struct depot_context *context
      = folded_walk (max, caller_return, false, &full);
  if (UNLIKELY (full))
    return folded_walk_deep (max, caller_return);
  return context;
}

/* A full unwind from CALLER_RETURN outwards into OUT (at most MAX), and
   what it teaches about the steps of its return addresses: from the
   runtime's frame out, each step is tried as its verdict says (all of
   them while it is not known yet: a frame-pointer step, the frame's rule,
   libunwind from there to the end) and must give the full unwind's next
   frame; a known verdict whose step does not is never trusted again.
   -1 when CALLER_RETURN is not in the unwound stack.  */
static int
capture_learning (uintptr_t *out, int max, uintptr_t caller_return)
{
  void *full[STACK_CAPTURE_MAX];
  uintptr_t tail[STACK_CAPTURE_MAX];
  uintptr_t low, high;
  int full_count = unw_backtrace (full, STACK_CAPTURE_MAX);
  int f = 0, count = 0, i;

  while (f < full_count && (uintptr_t) full[f] != caller_return)
    f++;
  if (f == full_count)
    return -1;
  for (int k = f; k < full_count && count < max && full[k] != NULL; k++)
    out[count++] = (uintptr_t) full[k];
  thread_stack_bounds (&low, &high);
  const uintptr_t *frame = runtime_frame_under (
      __builtin_frame_address (0), caller_return, low, high, NULL, NULL);
  if (frame == NULL)
    return count;
  struct frame_state state = state_above (frame);
  for (i = 0; i + 1 < count; i++)
    {
      /* STATE is at out[i].  */
      enum step_verdict verdict
          = verdict_of (pc_map_get (&frame_facts, out[i] - 1));
      struct frame_state next = state;
      if (verdict == STEP_FULL_UNWIND)
        return count;
      if (verdict == STEP_UNKNOWN || verdict == STEP_FRAME_POINTER)
        {
          if (step_by_frame_pointer (&next, low, high)
              && next.return_address == out[i + 1])
            {
              learn_verdict (out[i], STEP_FRAME_POINTER);
              state = next;
              continue;
            }
          next = state;
        }
      if (verdict == STEP_UNKNOWN || verdict == STEP_BY_RULE)
        {
          uint64_t rule = rule_of (&state);
          if ((rule & (RULE_USABLE | RULE_END)) == RULE_USABLE
              && step_by_rule (&next, rule, low, high)
              && next.return_address == out[i + 1])
            {
              learn_verdict (out[i], STEP_BY_RULE);
              state = next;
              continue;
            }
        }
      if (verdict == STEP_UNKNOWN || verdict == STEP_UNWIND_FROM_HERE)
        {
          uintptr_t last_sp = 0;
          int tail_count
              = unwind_from (tail, 0, count - i - 1, &state, &last_sp);
          if (tail_count == count - i - 1
              && memcmp (tail, out + i + 1, tail_count * sizeof *tail) == 0)
            {
              learn_verdict (out[i], STEP_UNWIND_FROM_HERE);
              tail_remember (tail, tail_count, &state, last_sp);
              return count;
            }
        }
      learn_verdict (out[i], STEP_FULL_UNWIND);
      return count;
    }
  /* The end of the stack (not of MAX): its last frame's rule may say so,
     as it did to the full unwind.  */
  if (i + 1 == count && count < max
      && verdict_of (pc_map_get (&frame_facts, out[i] - 1)) == STEP_UNKNOWN
      && (rule_of (&state) & (RULE_USABLE | RULE_END))
             == (RULE_USABLE | RULE_END))
    learn_verdict (out[i], STEP_BY_RULE);
  return count;
}

/* Every VERIFY_INTERVAL-th time: is the fast capture FAST (COUNT return
   addresses) what a full unwind gives?  If not, the step that went wrong
   is never trusted again.  The right capture is left in FAST; returns its
   count.  */
static int
verify_fast (uintptr_t *fast, int count, int max, uintptr_t caller_return)
{
  uintptr_t full[STACK_CAPTURE_MAX];
  int full_count = capture_learning (full, max, caller_return);
  int same = 0;

  if (full_count < 0)
    return count;
  while (same < count && same < full_count && fast[same] == full[same])
    same++;
  if (same == count && same == full_count)
    return count;
  /* fast[same - 1]'s step gave a wrong frame (same >= 1: both start at
     CALLER_RETURN).  */
  if (same > 0)
    learn_verdict (fast[same - 1], STEP_FULL_UNWIND);
  chain_length = 0;
  memcpy (fast, full, full_count * sizeof *full);
  return full_count;
}

/* For verbosity=1: fast captures (counted by VERIFY_INTERVAL) and full
   unwinds of unwinder=fast.  */
static _Atomic uint64_t fast_capture_count, full_unwind_count;

/* Return addresses from CALLER_RETURN outwards, as a full unwind gives
   them; -1 when CALLER_RETURN is not found.  */
static int
capture_exact (uintptr_t *out, uintptr_t *functions, int max,
               uintptr_t caller_return)
{
  int count = capture_fast (out, functions, max, caller_return);
  if (LIKELY (count >= 0 && ++fast_captures % VERIFY_INTERVAL != 0))
    return count;
  if (count < 0)
    {
      atomic_fetch_add_explicit (&full_unwind_count, 1, memory_order_relaxed);
      count = capture_learning (out, max, caller_return);
    }
  else
    {
      atomic_fetch_add_explicit (&fast_capture_count, VERIFY_INTERVAL,
                                 memory_order_relaxed);
      atomic_fetch_add_explicit (&rule_step_count, rule_steps,
                                 memory_order_relaxed);
      rule_steps = 0;
      atomic_fetch_add_explicit (&chain_join_count, chain_joins,
                                 memory_order_relaxed);
      atomic_fetch_add_explicit (&chain_frame_count, chain_frames,
                                 memory_order_relaxed);
      chain_joins = chain_frames = 0;
      atomic_fetch_add_explicit (&walked_join_count, walked_joins,
                                 memory_order_relaxed);
      walked_joins = 0;
      count = verify_fast (out, count, max, caller_return);
    }
  if (count > 0)
    memset (functions, 0, count * sizeof *functions); /* looked up later */
  return count;
}

void
stack_report (void)
{
  if (runtime_options.unwinder[0] == 'f' && runtime_options.unwinder[1] == 'a')
    log_printf (
        "unwinder=fast: %lu full unwinds, at least %lu stacks by "
        "frame pointers, frame rules and the tail cache; at least "
        "%lu steps by a frame rule, %lu libunwind steps to learn "
        "them; at least %lu stacks joined the thread's last chain, "
        "%lu frames from it; at least %lu joined the last folded walk",
        (unsigned long) full_unwind_count, (unsigned long) fast_capture_count,
        (unsigned long) rule_step_count, (unsigned long) rule_learning_steps,
        (unsigned long) chain_join_count, (unsigned long) chain_frame_count,
        (unsigned long) walked_join_count);
}

/* The most frames of the program kept (max_stack_depth's maximum), the
   same for every unwinder.  */
#define PROGRAM_FRAMES_MAX 256

/* The return addresses from CALLER_RETURN outwards into WHOLE (at most
   PROGRAM_FRAMES_MAX), by FRAME_POINTERS or libunwind; FUNCTIONS[i] 0.  */
static int
capture_by (uintptr_t *whole, uintptr_t *functions, bool frame_pointers,
            uintptr_t caller_return)
{
  void *frames[STACK_CAPTURE_MAX];
  int captured = frame_pointers
                     ? walk_frame_pointers (frames, STACK_CAPTURE_MAX)
                     : unw_backtrace (frames, STACK_CAPTURE_MAX);
  /* libunwind's frame 0 is this function's own pc.  */
  int first = frame_pointers ? 0 : 1;
  int count = 0;

  for (int i = 0; i < captured; i++)
    if ((uintptr_t) frames[i] == caller_return)
      {
        first = i;
        break;
      }
  for (int i = first; i < captured && count < PROGRAM_FRAMES_MAX; i++)
    {
      if (frames[i] == NULL)
        break;
      functions[count] = 0;
      whole[count++] = (uintptr_t) frames[i];
    }
  return count;
}

int
stack_capture_raw (uintptr_t *whole, uintptr_t *functions,
                   uintptr_t caller_return)
{
  const char *unwinder = runtime_options.unwinder;
  int count = -1;

  if (unwinder[0] == 'f' && unwinder[1] == 'a') /* fast */
    count = capture_exact (whole, functions, PROGRAM_FRAMES_MAX, caller_return);
  if (count < 0)
    count
        = capture_by (whole, functions,
                      unwinder[0] == 'f' && unwinder[1] == 'p', caller_return);
  return count;
}

int
stack_capture_full (uintptr_t *whole, uintptr_t *functions,
                    uintptr_t caller_return)
{
  return capture_by (whole, functions, false, caller_return);
}

int
stack_finish (uintptr_t *pcs, int max, uintptr_t *whole, uintptr_t *functions,
              int count)
{
  /* Return addresses are stored minus 1 so that they fall inside the call
     instruction: symbolizers then give the call's line and inline chain.
     The whole stack is folded before it is cut to MAX frames.  */
  for (int i = 0; i < count; i++)
    whole[i] -= 1;
  if (runtime_options.fold_recursion)
    count = stack_fold_recursion (whole, functions, count);
  if (count > max)
    count = max;
  memcpy (pcs, whole, count * sizeof *pcs);
  return count;
}

int
stack_capture (uintptr_t *pcs, int max, uintptr_t caller_return)
{
  uintptr_t whole[STACK_CAPTURE_MAX], functions[STACK_CAPTURE_MAX];
  int count = stack_capture_raw (whole, functions, caller_return);
  return stack_finish (pcs, max, whole, functions, count);
}
