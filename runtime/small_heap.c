/* The always-on mode's allocator for the blocks sampling leaves out
   (small_heap=1, on when sample_interval is above 1).

   Why: in the always-on mode nearly every block is one that sampling
   leaves out, and handing those to glibc left free () a test of every
   block (is it a recorded one, with a header?) on top of glibc's own
   malloc+free (about 60 instructions with tcache's safe-linking and
   double-free checks): on binary_trees' 15 ns pairs the checks cost
   15 % (docs/benchmarks.md, "Ninth pass, always-on").  Here the blocks
   sampling leaves out, up to SMALL_HEAP_MAX bytes, come from a
   per-thread, size-class free list, so that malloc's fast path is the
   sampling countdown and a pop, and free's a range test and a push:
   cheaper together than glibc's path alone.  Sampled blocks keep their
   header in glibc's memory (allocator.c), and every block of any other
   size or alignment is glibc's as before.

   Layout: one reserved range of SMALL_HEAP_BYTES, a class per
   2^SMALL_HEAP_CLASS_SHIFT bytes of it (classes of 16, 32, ... 256
   bytes), so a block's class is its offset shifted.  The range is
   carved in chunks of SMALL_HEAP_CHUNK bytes (whole blocks each, the
   rest of a chunk unused), each chunk by one thread at a time; a block's
   first word links it on a free list when it is free.

   Threads: each thread keeps a list per class (small_heap_list) of at
   most SMALL_HEAP_LIST_MAX blocks.  A free pushes onto the freeing
   thread's list whichever thread allocated the block; a list grown past
   the bound goes back to the class's pool (a stack of batches under a
   lock, each batch's count in its first block) but for the two blocks
   freed last, and an empty list takes a whole batch from the pool, or carves
   up to SMALL_HEAP_BATCH fresh blocks: neither walks a list.  A thread that exits gives its lists
   and the rest of its chunks back (a pthread key's destructor, set at
   its first refill or its first free onto an empty list); frees
   after that (later destructors) go straight back to the pool.

   Memory back to the kernel: when a class's pool holds more than
   SMALL_HEAP_SCAVENGE_MIN bytes more than it kept after the last time
   (and half again as much), the pool's blocks are counted
   per chunk; the chunks whose every
   block is in the pool are given back (madvise MADV_DONTNEED) and kept
   as clean chunks, carved again before fresh ones.  A chunk with a block
   in use or in a thread's list is kept whole.

   fork: the pools' locks are held across it (small_heap_fork_prepare).

   Signal handlers: the fast paths (small_heap.h) are a pop and a push
   with plain loads and stores, as safe against a handler of the same
   thread as glibc's per-thread cache is (a handler's pop between the
   interrupted pop's load and store hands a block out twice; its push
   there loses a block): they look at no flag, to cost nothing.  The slow
   paths take the pools' locks, which the thread's handler would wait on
   forever if it interrupted them (with one thread the lock is a plain
   store), so they are sections (internal.h, entry_begin) marked busy
   (small_heap_busy) from before they read the thread's list until after
   the last lock is let go.  A refill inside a section (a handler's, or
   the runtime's own allocation) takes no lock: NULL, and the caller's
   block is the runtime's reserve's (emergency.c: never glibc's, whose
   allocator the section may be inside).  A drain while the thread is busy here does
   nothing: the list stays over its bound and the next free drains it
   (a handler's drain inside the interrupted drain, from a count the
   interrupted one had read, once freed a batch twice).  A drain inside
   another section (the hooks' frees, the runtime's, a handler's) only
   tries the pool's lock, never waits for it, and leaves the scavenge to
   a later drain.  fork's handlers, which hold every pool's lock, mark
   the thread busy too.  */

#define _GNU_SOURCE
#include "small_heap.h"
#include "internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define SMALL_HEAP_CHUNK_SHIFT 16
#define SMALL_HEAP_CHUNK ((uintptr_t) 1 << SMALL_HEAP_CHUNK_SHIFT)
#define SMALL_HEAP_CHUNKS                                                      \
  ((size_t) 1 << (SMALL_HEAP_CLASS_SHIFT - SMALL_HEAP_CHUNK_SHIFT))
#define SMALL_HEAP_SCAVENGE_MIN (16UL << 20)

uintptr_t __memprof_small_heap_base = SMALL_HEAP_UNRESERVED;

__thread struct small_heap_thread small_heap_thread
    __attribute__ ((tls_model ("initial-exec")));
/* The thread's chunk being carved, per class: the next block and the
   end of the chunk's whole blocks.  */
static __thread uintptr_t carve_next[SMALL_HEAP_CLASSES]
    __attribute__ ((tls_model ("initial-exec")));
static __thread uintptr_t carve_end[SMALL_HEAP_CLASSES]
    __attribute__ ((tls_model ("initial-exec")));
/* The thread's destructor is registered; it ran (the thread exits).  */
static __thread bool thread_registered
    __attribute__ ((tls_model ("initial-exec")));
static __thread bool thread_closed __attribute__ ((tls_model ("initial-exec")));
/* The thread is inside a slow path of the small heap's, or fork's
   handlers: a handler that interrupts it takes none of the pools'
   locks (see the top of the file).  */
static __thread bool small_heap_busy
    __attribute__ ((tls_model ("initial-exec")));

static pthread_key_t thread_key;
static bool thread_key_made;
static spinlock_t reserve_lock;
static _Atomic bool reserve_failed;

/* A class's pool: batches of free blocks, each a list linked by the
   blocks' first words, the batches by their first blocks' second words
   (every block has 16 bytes or more; batch_set).  */
static struct
{
  spinlock_t lock;
  void *batches;
  uint64_t blocks;         /* in the batches */
  uint64_t scavenge_above; /* blocks: the pool's size that scavenges */
  uintptr_t carved;        /* chunks handed out of the class's range */
  uint64_t clean;          /* chunks given back and not carved again */
  uint64_t *clean_bits;    /* SMALL_HEAP_CHUNKS bits, or NULL */
  /* For stats=1 (small_heap_report): blocks carved from chunks, and
     blocks of the chunks given back (the lock held).  */
  _Atomic uint64_t carved_blocks;
  uint64_t given_back_blocks;
} pools[SMALL_HEAP_CLASSES] __attribute__ ((aligned (64)));

/* A batch's first block's second word: the next batch, and the batch's
   blocks in the top 16 bits (user addresses have 47 bits), so that a
   refill takes a batch without walking it.  */
#define BATCH_COUNT_SHIFT 48
static inline void
batch_set (void *batch, void *next, uint32_t count)
{
  ((uintptr_t *) batch)[1]
      = (uintptr_t) next | ((uintptr_t) count << BATCH_COUNT_SHIFT);
}

static inline void *
batch_next (const void *batch)
{
  return (void *) (((const uintptr_t *) batch)[1]
                   & (((uintptr_t) 1 << BATCH_COUNT_SHIFT) - 1));
}

static inline uint32_t
batch_count (const void *batch)
{
  return (uint32_t) (((const uintptr_t *) batch)[1] >> BATCH_COUNT_SHIFT);
}

static inline size_t
class_bytes (unsigned class)
{
  return ((size_t) class + 1) * 16;
}

static inline uintptr_t
class_base (unsigned class)
{
  return __memprof_small_heap_base
         + ((uintptr_t) class << SMALL_HEAP_CLASS_SHIFT);
}

static void give_back_thread (void *unused);

bool
small_heap_reserve (void)
{
  if (__memprof_small_heap_base != SMALL_HEAP_UNRESERVED)
    return true;
  if (atomic_load_explicit (&reserve_failed, memory_order_relaxed))
    return false;
  spin_lock (&reserve_lock);
  if (__memprof_small_heap_base == SMALL_HEAP_UNRESERVED && !reserve_failed)
    {
      void *range = mmap (NULL, SMALL_HEAP_BYTES, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (range == MAP_FAILED)
        atomic_store (&reserve_failed, true);
      else
        {
          /* Chunks are given back 64 KiB at a time: a huge page would
             keep 2 MiB of each class committed.  */
          madvise (range, SMALL_HEAP_BYTES, MADV_NOHUGEPAGE);
          thread_key_made
              = pthread_key_create (&thread_key, give_back_thread) == 0;
          for (unsigned class = 0; class < SMALL_HEAP_CLASSES; class ++)
            pools[class].scavenge_above
                = SMALL_HEAP_SCAVENGE_MIN / class_bytes (class);
          atomic_store_explicit (
              (_Atomic uintptr_t *) &__memprof_small_heap_base,
              (uintptr_t) range, memory_order_release);
        }
    }
  spin_unlock (&reserve_lock);
  return __memprof_small_heap_base != SMALL_HEAP_UNRESERVED;
}

/* A chunk of CLASS to carve (the pool's lock held): a clean one first,
   else the next of the range; 0 when the range is used up.  */
static uintptr_t
take_chunk (unsigned class)
{
  if (pools[class].clean > 0)
    for (size_t word = 0; word < SMALL_HEAP_CHUNKS / 64; word++)
      if (pools[class].clean_bits[word] != 0)
        {
          unsigned bit
              = (unsigned) __builtin_ctzll (pools[class].clean_bits[word]);
          pools[class].clean_bits[word] &= ~(1ULL << bit);
          pools[class].clean--;
          return class_base (class)
                 + ((word * 64 + bit) << SMALL_HEAP_CHUNK_SHIFT);
        }
  if (pools[class].carved >= SMALL_HEAP_CHUNKS)
    return 0;
  return class_base (class) + (pools[class].carved++ << SMALL_HEAP_CHUNK_SHIFT);
}

/* Link COUNT blocks of SIZE bytes from FIRST; the last one's link is
   NEXT.  */
static void
link_blocks (uintptr_t first, size_t size, uint32_t count, void *next)
{
  for (uint32_t i = 0; i + 1 < count; i++)
    *(void **) (first + i * size) = (void *) (first + (i + 1) * size);
  *(void **) (first + (count - 1) * size) = next;
}

static void scavenge (unsigned class);

/* Push the list FIRST of COUNT blocks onto CLASS's pool as a batch,
   the pool's lock held; true when the pool is to be scavenged.  */
static bool
pool_push_locked (unsigned class, void *first, uint32_t count)
{
  batch_set (first, pools[class].batches, count);
  pools[class].batches = first;
  pools[class].blocks += count;
  return pools[class].blocks > pools[class].scavenge_above;
}

/* The same, the lock taken here (the thread busy, in its section).  */
static void
pool_push (unsigned class, void *first, uint32_t count)
{
  spin_lock_hot (&pools[class].lock);
  bool full = pool_push_locked (class, first, count);
  spin_unlock (&pools[class].lock);
  if (full)
    scavenge (class);
}

/* The thread's destructor (give_back_thread) registered, once: on its
   first refill, or its first free onto an empty list (a thread that only
   frees blocks others made, whose lists would be lost at its exit).  */
void
small_heap_register_thread (void)
{
  if (UNLIKELY (!thread_registered) && thread_key_made && !thread_closed)
    {
      /* The value only has to be non-null for the destructor to run;
         pthread_setspecific may allocate (keys past the first 32).  */
      thread_registered = true;
      in_runtime++;
      pthread_setspecific (thread_key, &thread_registered);
      in_runtime--;
    }
}

/* The thread enters and leaves one of the small heap's slow paths (its
   handlers look at the flag).  */
static inline void
busy_begin (void)
{
  small_heap_busy = true;
  atomic_signal_fence (memory_order_seq_cst);
}

static inline void
busy_end (void)
{
  atomic_signal_fence (memory_order_seq_cst);
  small_heap_busy = false;
}

static void *refill_entered (unsigned class);

void *
small_heap_refill (unsigned class)
{
  if (UNLIKELY (__memprof_small_heap_base == SMALL_HEAP_UNRESERVED))
    return NULL;
  /* Inside a section (a handler's call, or the runtime's own) the block
     is the reserve's: no lock taken (see the top of the file).  */
  if (UNLIKELY (!entry_begin ()))
    return NULL;
  busy_begin ();
  void *block = refill_entered (class);
  busy_end ();
  entry_end ();
  return block;
}

/* small_heap_refill inside its section.  */
static void *
refill_entered (unsigned class)
{
  small_heap_register_thread ();
  size_t size = class_bytes (class);
  /* The thread's chunk first: its blocks are the next addresses.  */
  if (carve_next[class] >= carve_end[class])
    {
      void *batch = NULL;
      uint32_t count = 0;
      uintptr_t chunk = 0;
      spin_lock_hot (&pools[class].lock);
      if (pools[class].batches != NULL)
        {
          batch = pools[class].batches;
          pools[class].batches = batch_next (batch);
          count = batch_count (batch);
          pools[class].blocks -= count;
        }
      else
        chunk = take_chunk (class);
      spin_unlock (&pools[class].lock);
      if (batch != NULL)
        {
          void *rest = *(void **) batch;
          if (UNLIKELY (thread_closed))
            {
              /* After the thread's destructor: one block only.  */
              if (rest != NULL)
                pool_push (class, rest, count - 1);
              return batch;
            }
          /* One block is the caller's; the rest is the list (empty now).  */
          small_heap_list[class] = rest;
          small_heap_count[class] = count - 1;
          return batch;
        }
      if (chunk == 0)
        return NULL;
      carve_next[class] = chunk;
      carve_end[class] = chunk + (SMALL_HEAP_CHUNK / size) * size;
    }
  uintptr_t first = carve_next[class];
  uint32_t count = (uint32_t) ((carve_end[class] - first) / size);
  if (count > SMALL_HEAP_BATCH)
    count = SMALL_HEAP_BATCH;
  if (thread_closed)
    count = 1;
  carve_next[class] = first + count * size;
  atomic_fetch_add_explicit (&pools[class].carved_blocks, count,
                             memory_order_relaxed);
  if (count > 1)
    {
      link_blocks (first + size, size, count - 1, small_heap_list[class]);
      small_heap_list[class] = (void *) (first + size);
      small_heap_count[class] += count - 1;
    }
  return (void *) first;
}

void
small_heap_free_marked (void *pointer)
{
  unsigned class = small_heap_class_of (pointer);
  void *block = small_heap_list[class];
  for (uint32_t i = 0; block != NULL && i < small_heap_count[class]; i++)
    {
      if (block == pointer)
        {
          static const char message[]
              = "free(): double free detected in memprof's small heap\n";
          ssize_t written = write (2, message, sizeof message - 1);
          (void) written;
          abort ();
        }
      block = *(void **) block;
    }
  small_heap_push (pointer);
}

void
small_heap_drain (unsigned class)
{
  /* A handler inside the thread's own slow path: the list stays over
     its bound (see the top of the file).  */
  if (UNLIKELY (small_heap_busy))
    return;
  bool entered = entry_begin ();
  busy_begin ();
  /* Inside another section (nothing of the small heap's held by the
     thread): only a try.  */
  if (entered)
    spin_lock_hot (&pools[class].lock);
  else if (!spin_trylock_hot (&pools[class].lock))
    {
      busy_end ();
      return;
    }
  /* The list is read with the lock held and the thread busy: a handler
     that pushes meanwhile does not drain.  */
  void *head = small_heap_list[class];
  uint32_t count = small_heap_count[class];
  bool full = false;
  if (UNLIKELY (count <= SMALL_HEAP_LIST_MAX || head == NULL))
    {
      /* A handler's free drained the list between the interrupted
         free's count and this call: nothing over the bound now (a
         second push of the list's rest would find NULL).  */
    }
  else if (UNLIKELY (thread_closed))
    {
      /* After the thread's destructor every free drains: the block just
         freed is the list; the count stays at the bound.  */
      small_heap_list[class] = NULL;
      small_heap_count[class] = SMALL_HEAP_LIST_MAX;
      full = pool_push_locked (class, head, 1);
    }
  else
    {
      /* All but the two blocks freed last, without a walk: a thread
         freeing another's blocks (a consumer) hands them on in one
         batch, and one that allocates again refills from the pool only
         after as many allocations.  Two, so that a double free of either
         (free (a); free (b); free (a)) still finds its block on the list
         (small_heap_free_marked) when the drain falls between the
         frees.  */
      void *kept = *(void **) head;
      if (kept == NULL)
        /* A count a handler's push left too high (small_heap.h).  */
        small_heap_count[class] = 1;
      else
        {
          void *batch = *(void **) kept;
          *(void **) kept = NULL;
          small_heap_count[class] = 2;
          if (batch != NULL)
            full = pool_push_locked (class, batch, count - 2);
        }
    }
  spin_unlock (&pools[class].lock);
  if (full && entered)
    scavenge (class);
  busy_end ();
  if (entered)
    entry_end ();
}

/* The thread exits: its lists and the rest of its chunks go back to the
   pools; its frees from now on go back at once (small_heap_count is
   then kept at the bound, so that each free drains).  */
static void
give_back_thread (void *unused)
{
  (void) unused;
  bool entered = entry_begin ();
  busy_begin ();
  thread_closed = true;
  for (unsigned class = 0; class < SMALL_HEAP_CLASSES; class ++)
    {
      size_t size = class_bytes (class);
      uint32_t rest
          = (uint32_t) ((carve_end[class] - carve_next[class]) / size);
      if (rest > 0)
        {
          link_blocks (carve_next[class], size, rest, small_heap_list[class]);
          small_heap_list[class] = (void *) carve_next[class];
          small_heap_count[class] += rest;
          carve_next[class] = carve_end[class];
          atomic_fetch_add_explicit (&pools[class].carved_blocks, rest,
                                     memory_order_relaxed);
        }
      if (small_heap_count[class] > 0)
        pool_push (class, small_heap_list[class], small_heap_count[class]);
      small_heap_list[class] = NULL;
      small_heap_count[class] = SMALL_HEAP_LIST_MAX;
    }
  busy_end ();
  if (entered)
    entry_end ();
}

/* Give CLASS's chunks whose every block is in the pool back to the
   kernel (see the top of the file).  */
static void
scavenge (unsigned class)
{
  size_t size = class_bytes (class);
  uintptr_t base = class_base (class);
  uint32_t per_chunk = (uint32_t) (SMALL_HEAP_CHUNK / size);

  spin_lock (&pools[class].lock);
  if (pools[class].blocks <= pools[class].scavenge_above)
    {
      spin_unlock (&pools[class].lock);
      return;
    }
  void *batches = pools[class].batches;
  uint64_t blocks = pools[class].blocks;
  size_t chunks = pools[class].carved;
  pools[class].batches = NULL;
  pools[class].blocks = 0;
  /* No second scavenge of this class meanwhile.  */
  pools[class].scavenge_above = UINT64_MAX;
  if (pools[class].clean_bits == NULL)
    pools[class].clean_bits = runtime_map (SMALL_HEAP_CHUNKS / 8);
  uint64_t *clean_bits = pools[class].clean_bits;
  spin_unlock (&pools[class].lock);

  uint16_t *free_in = runtime_map (chunks * sizeof (uint16_t));
  uint64_t kept = 0, given = 0;
  void *kept_batches = NULL;
  if (free_in != NULL && clean_bits != NULL)
    {
      for (void *batch = batches; batch != NULL; batch = batch_next (batch))
        for (void *block = batch; block != NULL; block = *(void **) block)
          free_in[((uintptr_t) block - base) >> SMALL_HEAP_CHUNK_SHIFT]++;
      /* The blocks of the chunks kept, rebuilt into batches.  */
      void *list = NULL;
      uint32_t in_list = 0;
      void *next_batch;
      for (void *batch = batches; batch != NULL; batch = next_batch)
        {
          next_batch = batch_next (batch);
          void *next;
          for (void *block = batch; block != NULL; block = next)
            {
              next = *(void **) block;
              if (free_in[((uintptr_t) block - base) >> SMALL_HEAP_CHUNK_SHIFT]
                  == per_chunk)
                continue;
              *(void **) block = list;
              list = block;
              if (++in_list == SMALL_HEAP_BATCH)
                {
                  batch_set (list, kept_batches, in_list);
                  kept_batches = list;
                  list = NULL;
                  kept += in_list;
                  in_list = 0;
                }
            }
        }
      if (list != NULL)
        {
          batch_set (list, kept_batches, in_list);
          kept_batches = list;
          kept += in_list;
        }
      for (size_t chunk = 0; chunk < chunks; chunk++)
        if (free_in[chunk] == per_chunk)
          {
            madvise ((void *) (base + (chunk << SMALL_HEAP_CHUNK_SHIFT)),
                     SMALL_HEAP_CHUNK, MADV_DONTNEED);
            given++;
          }
    }
  else
    {
      kept_batches = batches;
      kept = blocks;
    }

  spin_lock (&pools[class].lock);
  if (given > 0)
    for (size_t chunk = 0; chunk < chunks; chunk++)
      if (free_in[chunk] == per_chunk)
        clean_bits[chunk / 64] |= 1ULL << (chunk % 64);
  pools[class].clean += given;
  pools[class].given_back_blocks += given * per_chunk;
  /* Splice the kept batches under the ones pushed meanwhile.  */
  if (kept_batches != NULL)
    {
      void *last = kept_batches;
      while (batch_next (last) != NULL)
        last = batch_next (last);
      batch_set (last, pools[class].batches, batch_count (last));
      pools[class].batches = kept_batches;
    }
  pools[class].blocks += kept;
  /* Half again what is kept (at least SMALL_HEAP_SCAVENGE_MIN more):
     each block the pool gains is walked a few times at most.  */
  uint64_t floor = SMALL_HEAP_SCAVENGE_MIN / size;
  pools[class].scavenge_above = kept + (kept / 2 > floor ? kept / 2 : floor);
  spin_unlock (&pools[class].lock);
  if (free_in != NULL)
    runtime_unmap (free_in, chunks * sizeof (uint16_t));
}

void
small_heap_fork_prepare (void)
{
  busy_begin ();
  spin_lock (&reserve_lock);
  for (unsigned class = 0; class < SMALL_HEAP_CLASSES; class ++)
    spin_lock (&pools[class].lock);
}

void
small_heap_fork_release (void)
{
  for (unsigned class = 0; class < SMALL_HEAP_CLASSES; class ++)
    spin_unlock (&pools[class].lock);
  spin_unlock (&reserve_lock);
  busy_end ();
}

/* stats=1: every block carved is in a pool, in a thread's list, in a
   chunk given back, or in the program's hands; at the end of a program
   that freed everything and whose other threads exited, the last is 0
   exactly (testsuite/runtime/small_heap_handoff.c), whatever way the
   blocks went between the threads.  */
void
small_heap_report (void)
{
  if (__memprof_small_heap_base == SMALL_HEAP_UNRESERVED)
    return;
  uint64_t carved = 0, pooled = 0, listed = 0, given_back = 0;
  for (unsigned class = 0; class < SMALL_HEAP_CLASSES; class ++)
    {
      spin_lock (&pools[class].lock);
      carved += atomic_load_explicit (&pools[class].carved_blocks,
                                      memory_order_relaxed);
      pooled += pools[class].blocks;
      given_back += pools[class].given_back_blocks;
      spin_unlock (&pools[class].lock);
      /* After the thread's destructor the count stays at the bound with
         the list empty (give_back_thread).  */
      if (!thread_closed)
        listed += small_heap_count[class];
    }
  uint64_t accounted = pooled + listed + given_back;
  log_printf ("stats: small heap: %lu blocks carved: %lu in the pools, %lu "
              "in this thread's lists, %lu in chunks given back, %ld in use "
              "or in other threads' lists",
              (unsigned long) carved, (unsigned long) pooled,
              (unsigned long) listed, (unsigned long) given_back,
              (long) (carved - accounted));
}
