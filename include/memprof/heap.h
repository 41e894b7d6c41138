/* Custom allocators made visible.  A pool, an arena, or a replaced
   operator new that does not call malloc hands out memory libmemprof
   never sees; reporting each block here gives it what a malloc'd block
   gets: its allocation context (captured by the runtime, from the
   function that calls memprof_heap_alloc), size, lifetime, CPUs and
   access counts, in the same profile.  The idea is heaptrack_api.h's,
   heapprofd's AHeapProfile_reportAllocation and Valgrind's mempool
   client requests.  See docs/heaps.md.

   Free when the runtime is absent: the runtime's entry points are weak
   references, so a program that includes this header needs no
   libmemprof to link or run; without it every call below is one test of
   a null pointer.  Define MEMPROF_NO_HEAP_API to compile the calls out
   entirely (their arguments are still evaluated).  Any thread may call them; none of them may be called from a
   signal handler.  */

#ifndef MEMPROF_HEAP_H
#define MEMPROF_HEAP_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The runtime's entry points (libmemprof); call the macros below.  */
extern unsigned __memprof_heap_register (const char *name)
    __attribute__ ((weak));
extern void __memprof_heap_alloc (unsigned heap, const void *block, size_t size)
    __attribute__ ((weak));
extern void __memprof_heap_free (unsigned heap, const void *block)
    __attribute__ ((weak));
extern void __memprof_heap_free_all (unsigned heap) __attribute__ ((weak));

/* Each call below is a macro, so that no frame of its own comes between
   the allocator's function and the runtime: the context starts at the
   allocator's function.  Each argument is evaluated once, with the
   runtime or without it.  */

/* memprof_heap_register (const char *name): a new heap named NAME
   (copied; at most 63 bytes are kept), for the runtime's messages.
   Returns its number (unsigned), never 0, or 0 when the runtime is absent
   or has no room for more heaps (256); calls with heap 0 do nothing.  */

/* memprof_heap_alloc (unsigned heap, const void *block, size_t size):
   BLOCK, SIZE bytes, has just been handed out by HEAP: record it as
   malloc's blocks are, with the call stack of the function calling this
   one, and start counting its accesses from 0.  Call it after the
   allocator's own bookkeeping, before the block is given to the program.
   A block of HEAP already live at BLOCK is first recorded as freed.
   Access counts are exact when no two live blocks share a 64-byte
   granule (blocks 64-byte aligned and padded, as the runtime does for
   malloc); otherwise a granule's accesses go to the block freed first.  */

/* memprof_heap_free (unsigned heap, const void *block): BLOCK, handed out
   by HEAP, is given back: fold its accesses and lifetime into its
   context.  Call it before the allocator reuses the memory.  A block
   that is not live in HEAP (never reported, sampled out, or already
   freed) is ignored.  */

/* memprof_heap_free_all (unsigned heap): every live block of HEAP is
   given back at once (an arena reset or destroyed, a pool released).
   The heap stays registered.  */

#ifndef MEMPROF_NO_HEAP_API
#define memprof_heap_register(name)                                            \
  __extension__({                                                              \
    const char *memprof_name_ = (name);                                        \
    __memprof_heap_register ? __memprof_heap_register (memprof_name_) : 0U;    \
  })
#define memprof_heap_alloc(heap, block, size)                                  \
  __extension__({                                                              \
    unsigned memprof_heap_ = (heap);                                           \
    const void *memprof_block_ = (block);                                      \
    size_t memprof_size_ = (size);                                             \
    if (__memprof_heap_alloc)                                                  \
      __memprof_heap_alloc (memprof_heap_, memprof_block_, memprof_size_);     \
  })
#define memprof_heap_free(heap, block)                                         \
  __extension__({                                                              \
    unsigned memprof_heap_ = (heap);                                           \
    const void *memprof_block_ = (block);                                      \
    if (__memprof_heap_free)                                                   \
      __memprof_heap_free (memprof_heap_, memprof_block_);                     \
  })
#define memprof_heap_free_all(heap)                                            \
  __extension__({                                                              \
    unsigned memprof_heap_ = (heap);                                           \
    if (__memprof_heap_free_all)                                               \
      __memprof_heap_free_all (memprof_heap_);                                 \
  })
#else
#define memprof_heap_register(name) ((void) (name), 0U)
#define memprof_heap_alloc(heap, block, size)                                  \
  ((void) (heap), (void) (block), (void) (size))
#define memprof_heap_free(heap, block) ((void) (heap), (void) (block))
#define memprof_heap_free_all(heap) ((void) (heap))
#endif

#ifdef __cplusplus
}
#endif

#endif /* MEMPROF_HEAP_H */
