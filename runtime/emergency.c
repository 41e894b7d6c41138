/* Memory for the malloc family's calls made inside one of the runtime's
   sections (internal.h, entry_begin): a signal handler's that
   interrupted a section, and the runtime's own (libunwind's, stdio's
   while a profile is written).

   Why not glibc's: a section may itself be inside glibc's malloc, free
   or realloc (a block with a header, a sampled one, a block glibc
   serves past the small heap), and glibc's allocator is not re-entrant:
   with one thread it takes no lock, so a handler's call in the middle
   of an interrupted one corrupts its arena; with more it waits forever
   for the arena's lock the interrupted frame holds.  glibc's per-thread
   cache would serve a small size safely, but with the runtime the
   program's small blocks are the slots' or the small heap's, so that
   cache stays empty (docs/internals.md, "Signal handlers that
   allocate").

   So every call made inside a section is served here, by code that is
   async-signal-safe and lock-free (a handler may interrupt it on the
   same thread, and any thread may free): spans of EMERGENCY_UNIT <<
   class bytes carved from one reserved range by an atomic addition,
   freed onto a list per class (a stack whose head carries a count of
   its changes, so that a pop whose head was popped and pushed back
   meanwhile fails its compare-and-swap); a span larger than the
   classes', or any once the range is used up, is a mapping of its own.
   The range is reserved by the first call (mmap, which is
   async-signal-safe; of two threads racing, one keeps its reservation).
   The spans of the range are never given back to the kernel: the
   blocks made here are few (a handler's, the runtime's own).

   A block's user pointer is aligned to at least EMERGENCY_UNIT; the
   EMERGENCY_ROOM bytes before it are the caller's (allocator.c puts a
   block header there, so that free, realloc and malloc_usable_size
   recognise the block from any context later), and the 16 bytes before
   those say where the span starts and how long it is.  */

#include "internal.h"

#include <sys/mman.h>

/* The range's size, and the classes' spans: EMERGENCY_UNIT << class
   bytes, class 1 to EMERGENCY_CLASSES - 1 (128 bytes to 64 KiB).  */
#define EMERGENCY_RANGE_BYTES (64UL << 20)
#define EMERGENCY_UNIT 64
#define EMERGENCY_CLASSES 11
/* A list's head: the first span's index in units (from 1; 0 is the
   empty list) in the low half, the count of the head's changes in the
   high half.  */
#define HEAD_INDEX_MASK 0xffffffffULL
#define HEAD_COUNT_ONE (1ULL << 32)

_Static_assert(EMERGENCY_RANGE_BYTES / EMERGENCY_UNIT < HEAD_INDEX_MASK,
               "a span's index fits in a list's head");
_Static_assert(EMERGENCY_ROOM + 16 == EMERGENCY_UNIT,
               "the span's start and length fit before the caller's room");

/* What the 16 bytes before the caller's room hold.  */
struct span_prefix
{
  uintptr_t start;
  size_t bytes;
};

static _Atomic uintptr_t range_base;
static _Atomic uint64_t range_carved;
static _Atomic uint64_t free_heads[EMERGENCY_CLASSES];

/* The range, reserved by the first caller; 0 when it cannot be.  */
static uintptr_t
range (void)
{
  uintptr_t base = atomic_load_explicit (&range_base, memory_order_acquire);
  if (LIKELY (base != 0))
    return base;
  void *mapped = mmap (NULL, EMERGENCY_RANGE_BYTES, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapped == MAP_FAILED)
    return 0;
  uintptr_t expected = 0;
  if (!atomic_compare_exchange_strong (&range_base, &expected,
                                       (uintptr_t) mapped))
    {
      /* Another thread's (or a handler's) reservation came first.  */
      munmap (mapped, EMERGENCY_RANGE_BYTES);
      return expected;
    }
  return (uintptr_t) mapped;
}

/* The smallest class whose spans hold BYTES, or EMERGENCY_CLASSES.  */
static unsigned
class_for (size_t bytes)
{
  unsigned class = 1;
  while (class < EMERGENCY_CLASSES
         && ((size_t) EMERGENCY_UNIT << class) < bytes)
    class ++;
  return class;
}

/* A span of CLASS from its list, or 0.  */
static uintptr_t
pop (uintptr_t base, unsigned class)
{
  uint64_t head
      = atomic_load_explicit (&free_heads[class], memory_order_acquire);
  while ((head & HEAD_INDEX_MASK) != 0)
    {
      uintptr_t span
          = base + ((head & HEAD_INDEX_MASK) - 1) * (uintptr_t) EMERGENCY_UNIT;
      /* The span may have been popped and handed out meanwhile: its
         first word is then the new owner's, and the exchange below
         fails (the range stays mapped, so the read is safe).  */
      uint64_t next = __atomic_load_n ((uint64_t *) span, __ATOMIC_RELAXED);
      uint64_t fresh = ((head & ~HEAD_INDEX_MASK) + HEAD_COUNT_ONE)
                       | (next & HEAD_INDEX_MASK);
      if (atomic_compare_exchange_weak_explicit (&free_heads[class], &head,
                                                 fresh, memory_order_acquire,
                                                 memory_order_acquire))
        return span;
    }
  return 0;
}

static void
push (uintptr_t base, unsigned class, uintptr_t span)
{
  uint64_t index = (span - base) / EMERGENCY_UNIT + 1;
  uint64_t head
      = atomic_load_explicit (&free_heads[class], memory_order_relaxed);
  uint64_t fresh;
  do
    {
      __atomic_store_n ((uint64_t *) span, head & HEAD_INDEX_MASK,
                        __ATOMIC_RELAXED);
      fresh = ((head & ~HEAD_INDEX_MASK) + HEAD_COUNT_ONE) | index;
    }
  while (!atomic_compare_exchange_weak_explicit (&free_heads[class], &head,
                                                 fresh, memory_order_release,
                                                 memory_order_relaxed));
}

/* A span of BYTES (EMERGENCY_UNIT << CLASS) carved from the range, or 0
   when it is used up.  */
static uintptr_t
carve (uintptr_t base, unsigned class)
{
  uint64_t bytes = (uint64_t) EMERGENCY_UNIT << class;
  uint64_t at = atomic_load_explicit (&range_carved, memory_order_relaxed);
  do
    if (at + bytes > EMERGENCY_RANGE_BYTES)
      return 0;
  while (!atomic_compare_exchange_weak_explicit (&range_carved, &at, at + bytes,
                                                 memory_order_relaxed,
                                                 memory_order_relaxed));
  return base + at;
}

void *
emergency_allocate (size_t size, size_t alignment)
{
  if (alignment < EMERGENCY_UNIT)
    alignment = EMERGENCY_UNIT;
  /* The user pointer's offset in the span is at most ALIGNMENT (a unit
     or more before it for the prefix and the caller's room).  */
  size_t bytes = alignment + size;
  if (UNLIKELY (bytes < size || size >= (1ULL << 47)))
    return NULL;
  uintptr_t span = 0, span_bytes = 0;
  uintptr_t base = range ();
  unsigned class = class_for (bytes);
  if (base != 0 && class < EMERGENCY_CLASSES)
    {
      span = pop (base, class);
      if (span == 0)
        span = carve (base, class);
      span_bytes = (uintptr_t) EMERGENCY_UNIT << class;
    }
  if (span == 0)
    {
      /* A mapping of its own: at a page boundary, so aligned to 64.  */
      span_bytes = ROUND_UP (bytes, 4096);
      void *mapped = mmap (NULL, span_bytes, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (mapped == MAP_FAILED)
        return NULL;
      span = (uintptr_t) mapped;
    }
  uintptr_t user = ROUND_UP (span + EMERGENCY_UNIT, alignment);
  struct span_prefix *prefix
      = (struct span_prefix *) (user - EMERGENCY_ROOM) - 1;
  prefix->start = span;
  prefix->bytes = span_bytes;
  return (void *) user;
}

void
emergency_free (void *pointer)
{
  const struct span_prefix *prefix
      = (const struct span_prefix *) ((uintptr_t) pointer - EMERGENCY_ROOM) - 1;
  uintptr_t span = prefix->start;
  size_t bytes = prefix->bytes;
  uintptr_t base = atomic_load_explicit (&range_base, memory_order_acquire);
  if (base != 0 && span - base < EMERGENCY_RANGE_BYTES)
    push (base, class_for (bytes), span);
  else
    munmap ((void *) span, bytes);
}
