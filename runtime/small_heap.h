/* The always-on mode's allocator for the blocks sampling leaves out
   (small_heap=1; small_heap.c has the design).  Its fast paths are
   inline in allocator.c's entry points: a pop from the thread's list of
   the block's size class, a push onto it.  */

#ifndef MEMPROF_SMALL_HEAP_H
#define MEMPROF_SMALL_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Blocks of up to SMALL_HEAP_MAX bytes, in classes 16 bytes apart; each
   class has a range of its own (2^SMALL_HEAP_CLASS_SHIFT bytes, reserved
   and committed as it is used), so that free finds a block's class from
   its address alone.  */
#define SMALL_HEAP_MAX 256
#define SMALL_HEAP_CLASSES (SMALL_HEAP_MAX / 16)
#define SMALL_HEAP_CLASS_SHIFT 32
#define SMALL_HEAP_BYTES                                                       \
  ((uintptr_t) SMALL_HEAP_CLASSES << SMALL_HEAP_CLASS_SHIFT)
/* The base until the range is reserved: no pointer minus it falls below
   SMALL_HEAP_BYTES (the top of the address space is the kernel's).  */
#define SMALL_HEAP_UNRESERVED ((uintptr_t) 0 - SMALL_HEAP_BYTES)
/* A thread's list of a class holds at most this many blocks; beyond it,
   all but the two blocks freed last go back to the class's pool in one
   batch.  A refill carves this many fresh blocks at most.  Small, for
   the blocks threads hand over: a block a consumer frees reaches a
   producer again only when the consumer's list of its class overflows,
   so with 512 and producer_consumer's messages over 16 classes each
   block went round some 8,000 frees (1.2 MB) away from the caches, and
   the program's CPU time was 1.11x gcc -O2's (docs/benchmarks.md,
   "Eleventh pass, always-on").  A thread that allocates and frees in
   balance pays a drain and a refill per 63 blocks.  */
#define SMALL_HEAP_LIST_MAX 64
#define SMALL_HEAP_BATCH 64

extern uintptr_t __memprof_small_heap_base
    __attribute__ ((visibility ("hidden")));

/* The thread's free blocks of each class (linked by their first word)
   and their numbers; one variable, so that the fast paths find both from
   one thread-pointer offset.  */
struct small_heap_thread
{
  void *list[SMALL_HEAP_CLASSES];
  uint32_t count[SMALL_HEAP_CLASSES];
};
extern __thread struct small_heap_thread small_heap_thread
    __attribute__ ((tls_model ("initial-exec"), visibility ("hidden")));
#define small_heap_list small_heap_thread.list
#define small_heap_count small_heap_thread.count

/* Is POINTER one of the small heap's blocks?  */
static inline bool
small_heap_owns (const void *pointer)
{
  return (uintptr_t) pointer - __memprof_small_heap_base < SMALL_HEAP_BYTES;
}

/* The class of a block of SIZE bytes (1 to SMALL_HEAP_MAX).  */
static inline unsigned
small_heap_class_for (uint64_t size)
{
  return (unsigned) (size - 1) >> 4;
}

static inline unsigned
small_heap_class_of (const void *pointer)
{
  return (unsigned) (((uintptr_t) pointer - __memprof_small_heap_base)
                     >> SMALL_HEAP_CLASS_SHIFT);
}

/* The usable bytes of the small heap's block POINTER.  */
static inline size_t
small_heap_size_of (const void *pointer)
{
  return ((size_t) small_heap_class_of (pointer) + 1) * 16;
}

/* A block of CLASS from the thread's list when there is none, or NULL
   when the class's range is used up (glibc's block then).  */
void *small_heap_refill (unsigned class);
/* The thread's list of CLASS is over SMALL_HEAP_LIST_MAX: it goes back
   to the class's pool but for its first block.  */
void small_heap_drain (unsigned class);

/* A block of CLASS (the thread's list, or its refill), NULL when the
   range is used up.  */
static inline __attribute__ ((always_inline)) void *
small_heap_allocate (unsigned class)
{
  void *block = small_heap_list[class];
  if (__builtin_expect (block != NULL, 1))
    {
      void *next = *(void **) block;
      /* Not a free block any more (small_heap_free's mark).  */
      ((uintptr_t *) block)[1] = 0;
      small_heap_list[class] = next;
      small_heap_count[class]--;
      /* The next pop reads NEXT's link: a block another thread freed
         (producer and consumer) is on that thread's cache, a miss that
         the program's work until then hides.  */
      __builtin_prefetch (next);
      return block;
    }
  return small_heap_refill (class);
}

/* A block went onto the thread's empty list: the thread's lists must be
   given back when it exits (a thread that only frees never refills).  */
void small_heap_register_thread (void);

/* Push the small heap's block POINTER onto the thread's list of its
   class.  A free block's second word is its address inverted (every
   block has 16 bytes or more; a batch's first block has its count there
   instead; a pop clears it): a second free finds it so, as glibc's
   tcache finds its key, rather than put the block on a list twice and
   hand it out twice.  */
static inline __attribute__ ((always_inline)) void
small_heap_push (void *pointer)
{
  unsigned class = small_heap_class_of (pointer);
  void *head = small_heap_list[class];
  *(void **) pointer = head;
  ((uintptr_t *) pointer)[1] = ~(uintptr_t) pointer;
  small_heap_list[class] = pointer;
  if (__builtin_expect (++small_heap_count[class] > SMALL_HEAP_LIST_MAX, 0))
    small_heap_drain (class);
  else if (__builtin_expect (head == NULL, 0))
    small_heap_register_thread ();
}

/* The free of a block marked free (small_heap_push): abort, as glibc's
   tcache does, when it is on the thread's list; else (the program's
   data) push it.  Out of line and last, so that the fast path keeps no
   register across a call.  */
void small_heap_free_marked (void *pointer);

/* Free the small heap's block POINTER.  */
static inline __attribute__ ((always_inline)) void
small_heap_free (void *pointer)
{
  if (__builtin_expect (((uintptr_t *) pointer)[1] == ~(uintptr_t) pointer, 0))
    small_heap_free_marked (pointer);
  else
    small_heap_push (pointer);
}

/* Reserve the range (once; false when it cannot be: every block is then
   glibc's).  */
bool small_heap_reserve (void);
void small_heap_fork_prepare (void);
void small_heap_fork_release (void);
/* stats=1's line on where the carved blocks are.  */
void small_heap_report (void);

#endif
