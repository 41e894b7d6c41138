/* C++ operator new and delete, every form: plain, nothrow, sized, aligned
   and array.  Written in C under their mangled names, so that libmemprof
   needs no C++ runtime of its own.  On failure, throwing new follows the
   standard: call the installed new-handler and retry, or throw
   std::bad_alloc; both come from libstdc++ through weak references, which
   every C++ program resolves.  */

#include "internal.h"
#include "trace.h"

#include <stdio.h>
#include <stdlib.h>

void *allocator_allocate (size_t size, size_t alignment,
                          uintptr_t caller_return);
void allocator_deallocate (void *pointer);

typedef void (*new_handler_fn) (void);
extern new_handler_fn _ZSt15get_new_handlerv (void) __attribute__ ((weak));
extern void _ZSt17__throw_bad_allocv (void) __attribute__ ((weak, noreturn));

/* std::align_val_t is a size_t enum, std::nothrow_t an empty struct passed
   by reference: at the ABI level they are a size_t and a pointer.  */

/* The alignment recorded in the trace: only the aligned forms have one. */
#define TRACED_ALIGNMENT(flags, alignment)                                     \
  (((flags) &MEMPROF_TRACE_ALIGNED) != 0 ? (alignment) : 0)

static void *
new_or_throw (size_t size, size_t alignment, uintptr_t caller_return,
              unsigned op, unsigned flags)
{
  for (;;)
    {
      void *pointer = allocator_allocate (size, alignment, caller_return);
      new_handler_fn handler;

      if (LIKELY (pointer != NULL))
        {
          TRACE_ALLOCATION (op, flags, size,
                            TRACED_ALIGNMENT (flags, alignment), pointer);
          return pointer;
        }
      handler = _ZSt15get_new_handlerv ? _ZSt15get_new_handlerv () : NULL;
      if (handler == NULL)
        {
          TRACE_ALLOCATION (op, flags, size,
                            TRACED_ALIGNMENT (flags, alignment), NULL);
          if (_ZSt17__throw_bad_allocv)
            _ZSt17__throw_bad_allocv ();
          log_printf ("operator new (%zu) failed and no C++ runtime is loaded "
                      "to throw std::bad_alloc; aborting",
                      size);
          abort ();
        }
      handler ();
    }
}

/* The nothrow forms return NULL instead of throwing; a new-handler that
   throws would propagate, so the handler is not called from them.  */
static void *
new_or_null (size_t size, size_t alignment, uintptr_t caller_return,
             unsigned op, unsigned flags)
{
  void *pointer = allocator_allocate (size, alignment, caller_return);
  TRACE_ALLOCATION (op, flags, size, TRACED_ALIGNMENT (flags, alignment),
                    pointer);
  return pointer;
}

/* A delete, recorded before the memory goes back.  */
static void
traced_delete (void *pointer, unsigned op, unsigned flags, size_t size,
               size_t alignment)
{
  trace_deallocation (op, flags, pointer, size, alignment);
  allocator_deallocate (pointer);
}

#define CALLER ((uintptr_t) __builtin_return_address (0))
#define DEFAULT_ALIGNMENT MEMPROF_GRANULE_SIZE

/* operator new (size_t), new[] (size_t) */
MEMPROF_EXPORT void *
_Znwm (size_t size)
{
  return new_or_throw (size, DEFAULT_ALIGNMENT, CALLER, MEMPROF_TRACE_NEW, 0);
}
MEMPROF_EXPORT void *
_Znam (size_t size)
{
  return new_or_throw (size, DEFAULT_ALIGNMENT, CALLER, MEMPROF_TRACE_NEW_ARRAY,
                       0);
}
/* (size_t, const std::nothrow_t &) */
MEMPROF_EXPORT void *
_ZnwmRKSt9nothrow_t (size_t size, const void *tag)
{
  (void) tag;
  return new_or_null (size, DEFAULT_ALIGNMENT, CALLER, MEMPROF_TRACE_NEW,
                      MEMPROF_TRACE_NOTHROW);
}
MEMPROF_EXPORT void *
_ZnamRKSt9nothrow_t (size_t size, const void *tag)
{
  (void) tag;
  return new_or_null (size, DEFAULT_ALIGNMENT, CALLER, MEMPROF_TRACE_NEW_ARRAY,
                      MEMPROF_TRACE_NOTHROW);
}
/* (size_t, std::align_val_t) */
MEMPROF_EXPORT void *
_ZnwmSt11align_val_t (size_t size, size_t alignment)
{
  return new_or_throw (size, alignment, CALLER, MEMPROF_TRACE_NEW,
                       MEMPROF_TRACE_ALIGNED);
}
MEMPROF_EXPORT void *
_ZnamSt11align_val_t (size_t size, size_t alignment)
{
  return new_or_throw (size, alignment, CALLER, MEMPROF_TRACE_NEW_ARRAY,
                       MEMPROF_TRACE_ALIGNED);
}
/* (size_t, std::align_val_t, const std::nothrow_t &) */
MEMPROF_EXPORT void *
_ZnwmSt11align_val_tRKSt9nothrow_t (size_t size, size_t alignment,
                                    const void *tag)
{
  (void) tag;
  return new_or_null (size, alignment, CALLER, MEMPROF_TRACE_NEW,
                      MEMPROF_TRACE_NOTHROW | MEMPROF_TRACE_ALIGNED);
}
MEMPROF_EXPORT void *
_ZnamSt11align_val_tRKSt9nothrow_t (size_t size, size_t alignment,
                                    const void *tag)
{
  (void) tag;
  return new_or_null (size, alignment, CALLER, MEMPROF_TRACE_NEW_ARRAY,
                      MEMPROF_TRACE_NOTHROW | MEMPROF_TRACE_ALIGNED);
}

/* operator delete (void *), delete[] (void *) */
MEMPROF_EXPORT void
_ZdlPv (void *pointer)
{
  traced_delete (pointer, MEMPROF_TRACE_DELETE, 0, 0, 0);
}
MEMPROF_EXPORT void
_ZdaPv (void *pointer)
{
  traced_delete (pointer, MEMPROF_TRACE_DELETE_ARRAY, 0, 0, 0);
}
/* (void *, size_t) */
MEMPROF_EXPORT void
_ZdlPvm (void *pointer, size_t size)
{
  traced_delete (pointer, MEMPROF_TRACE_DELETE, MEMPROF_TRACE_SIZED, size, 0);
}
MEMPROF_EXPORT void
_ZdaPvm (void *pointer, size_t size)
{
  traced_delete (pointer, MEMPROF_TRACE_DELETE_ARRAY, MEMPROF_TRACE_SIZED, size,
                 0);
}
/* (void *, const std::nothrow_t &) */
MEMPROF_EXPORT void
_ZdlPvRKSt9nothrow_t (void *pointer, const void *tag)
{
  (void) tag;
  traced_delete (pointer, MEMPROF_TRACE_DELETE, MEMPROF_TRACE_NOTHROW, 0, 0);
}
MEMPROF_EXPORT void
_ZdaPvRKSt9nothrow_t (void *pointer, const void *tag)
{
  (void) tag;
  traced_delete (pointer, MEMPROF_TRACE_DELETE_ARRAY, MEMPROF_TRACE_NOTHROW, 0,
                 0);
}
/* (void *, std::align_val_t) */
MEMPROF_EXPORT void
_ZdlPvSt11align_val_t (void *pointer, size_t alignment)
{
  traced_delete (pointer, MEMPROF_TRACE_DELETE, MEMPROF_TRACE_ALIGNED, 0,
                 alignment);
}
MEMPROF_EXPORT void
_ZdaPvSt11align_val_t (void *pointer, size_t alignment)
{
  traced_delete (pointer, MEMPROF_TRACE_DELETE_ARRAY, MEMPROF_TRACE_ALIGNED, 0,
                 alignment);
}
/* (void *, size_t, std::align_val_t) */
MEMPROF_EXPORT void
_ZdlPvmSt11align_val_t (void *pointer, size_t size, size_t alignment)
{
  traced_delete (pointer, MEMPROF_TRACE_DELETE,
                 MEMPROF_TRACE_ALIGNED | MEMPROF_TRACE_SIZED, size, alignment);
}
MEMPROF_EXPORT void
_ZdaPvmSt11align_val_t (void *pointer, size_t size, size_t alignment)
{
  traced_delete (pointer, MEMPROF_TRACE_DELETE_ARRAY,
                 MEMPROF_TRACE_ALIGNED | MEMPROF_TRACE_SIZED, size, alignment);
}
/* (void *, std::align_val_t, const std::nothrow_t &) */
MEMPROF_EXPORT void
_ZdlPvSt11align_val_tRKSt9nothrow_t (void *pointer, size_t alignment,
                                     const void *tag)
{
  (void) tag;
  traced_delete (pointer, MEMPROF_TRACE_DELETE,
                 MEMPROF_TRACE_NOTHROW | MEMPROF_TRACE_ALIGNED, 0, alignment);
}
MEMPROF_EXPORT void
_ZdaPvSt11align_val_tRKSt9nothrow_t (void *pointer, size_t alignment,
                                     const void *tag)
{
  (void) tag;
  traced_delete (pointer, MEMPROF_TRACE_DELETE_ARRAY,
                 MEMPROF_TRACE_NOTHROW | MEMPROF_TRACE_ALIGNED, 0, alignment);
}
