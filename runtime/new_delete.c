/* C++ operator new and delete, every form: plain, nothrow, sized, aligned
   and array.  Written in C under their mangled names, so that libmemprof
   needs no C++ runtime of its own (catch_all.cc excepted, see there).

   They behave as libstdc++'s do, down to which form calls which, because
   a program may replace some of them (the standard allows replacing each
   one; game engines, databases and servers replace the basic ones with
   pools).  libstdc++'s derived forms call the basic form they are
   defined by, through its dynamic symbol, so that the program's
   replacement wins:

       new[] (n)               -> new (n)
       new (n, nothrow)        -> new (n), NULL if it throws
       new[] (n, nothrow)      -> new[] (n), NULL if it throws
       new (n, al)             basic: bad_alloc unless al is a power of two
       new[] (n, al)           -> new (n, al)
       new (n, al, nothrow)    -> new (n, al), NULL if it throws
       new[] (n, al, nothrow)  -> new[] (n, al), NULL if it throws
       delete (p)              basic
       delete[] (p), delete (p, size), delete (p, nothrow) -> delete (p)
       delete[] (p, size), delete[] (p, nothrow)           -> delete[] (p)
       delete (p, al)          basic
       delete[] (p, al), delete (p, size, al), delete (p, al, nothrow)
                               -> delete (p, al)
       delete[] (p, size, al), delete[] (p, al, nothrow)   -> delete[] (p, al)

   So do these.  When every form on the way is this file's own, the call
   goes straight to the allocator, recorded as made by the program's
   caller with the form's name in the trace; otherwise it goes to the
   program's form (a tail call: no frame of the runtime stays in the
   stacks), and the allocation is recorded where it really reaches malloc,
   if it does.  All are weak definitions, as libstdc++'s are, so that a
   program linked with libmemprof.a may still define its own.

   On failure, throwing new follows the standard: call the installed
   new-handler and retry, or throw std::bad_alloc; both come from
   libstdc++ through weak references, which every C++ program resolves.  */

#include "internal.h"
#include "trace.h"

#include <stdio.h>
#include <stdlib.h>

void *allocator_allocate (size_t size, size_t alignment,
                          uintptr_t caller_return);
void allocator_deallocate (void *pointer);
void *allocator_allocate_reentered (size_t size, size_t alignment);
void allocator_deallocate_entered (void *pointer);
void allocator_free_reentered (void *pointer);
void *allocator_new_quickly (size_t size, uintptr_t site);
void *call_catching (void *(*function) (void *), void *argument);

typedef void (*new_handler_fn) (void);
extern new_handler_fn _ZSt15get_new_handlerv (void) __attribute__ ((weak));
extern void _ZSt17__throw_bad_allocv (void) __attribute__ ((weak, noreturn));

/* std::align_val_t is a size_t enum, std::nothrow_t an empty struct passed
   by reference: at the ABI level they are a size_t and a pointer.  */

#define OPERATOR MEMPROF_EXPORT __attribute__ ((weak))

/* The forms that others call, defined below.  */
OPERATOR void *_Znwm (size_t size);
OPERATOR void *_Znam (size_t size);
OPERATOR void *_ZnwmSt11align_val_t (size_t size, size_t alignment);
OPERATOR void *_ZnamSt11align_val_t (size_t size, size_t alignment);
OPERATOR void _ZdlPv (void *pointer);
OPERATOR void _ZdlPvm (void *pointer, size_t size);
OPERATOR void _ZdaPv (void *pointer);
OPERATOR void _ZdlPvSt11align_val_t (void *pointer, size_t alignment);
OPERATOR void _ZdaPvSt11align_val_t (void *pointer, size_t alignment);

/* The same code under names that no program can replace.  */
#define OWN(form)                                                              \
  extern __typeof (form) own##form                                             \
      __attribute__ ((alias (#form), visibility ("hidden")))
OWN (_Znwm);
OWN (_Znam);
OWN (_ZnwmSt11align_val_t);
OWN (_ZnamSt11align_val_t);
OWN (_ZdlPv);
/* direct_calls.c's sized delete jumps to it.  */
OWN (_ZdlPvm);
OWN (_ZdaPv);
OWN (_ZdlPvSt11align_val_t);
OWN (_ZdaPvSt11align_val_t);

/* Is FORM, as the dynamic linker resolved it, this file's own, i.e. not
   replaced by the program?  The asm keeps GCC from deciding it at
   compile time.  */
static inline bool
is_own (void *resolved, void *own)
{
  __asm__("" : "+r"(resolved));
  return resolved == own;
}
#define OWN_FORM(form) is_own ((void *) form, (void *) own##form)

/* The alignment recorded in the trace: only the aligned forms have one. */
#define TRACED_ALIGNMENT(flags, alignment)                                     \
  (((flags) &MEMPROF_TRACE_ALIGNED) != 0 ? (alignment) : 0)

static bool
is_power_of_two (size_t value)
{
  return value != 0 && (value & (value - 1)) == 0;
}

static new_handler_fn
current_new_handler (void)
{
  return _ZSt15get_new_handlerv ? _ZSt15get_new_handlerv () : NULL;
}

static __attribute__ ((noreturn)) void
throw_bad_alloc (const char *why, size_t size)
{
  if (_ZSt17__throw_bad_allocv)
    _ZSt17__throw_bad_allocv ();
  log_printf ("operator new (%zu) %s and no C++ runtime is loaded to throw "
              "std::bad_alloc; aborting",
              size, why);
  abort ();
}

/* A new made inside one of the runtime's sections (a signal handler
   interrupted it): the reserve's block, as malloc's (allocator.c).  */
static void *
new_reentered (size_t size, size_t alignment)
{
  void *pointer = allocator_allocate_reentered (size, alignment);
  if (UNLIKELY (pointer == NULL))
    throw_bad_alloc ("failed", size);
  return pointer;
}

/* The section (entry_begin) is left before the new-handler runs (it may
   free, allocate, or throw) and before anything is thrown.  */
static void *
new_or_throw (size_t size, size_t alignment, uintptr_t caller_return,
              unsigned op, unsigned flags)
{
  if (!entry_begin ())
    return new_reentered (size, alignment);
  STACK_ENTRY_BEGIN ();
  for (;;)
    {
      void *pointer = allocator_allocate (size, alignment, caller_return);
      new_handler_fn handler;

      if (LIKELY (pointer != NULL))
        {
          STACK_ENTRY_END ();
          TRACE_ALLOCATION (op, flags, size,
                            TRACED_ALIGNMENT (flags, alignment), pointer);
          entry_end ();
          return pointer;
        }
      handler = current_new_handler ();
      if (handler == NULL)
        {
          STACK_ENTRY_END ();
          TRACE_ALLOCATION (op, flags, size,
                            TRACED_ALIGNMENT (flags, alignment), NULL);
          entry_end ();
          throw_bad_alloc ("failed", size);
        }
      entry_end ();
      handler ();
      entry_begin ();
    }
}

/* An allocation that the nothrow forms retry after calling the
   new-handler (which may throw).  */
struct retry
{
  size_t size, alignment;
  uintptr_t caller_return;
};

static void *
retry_after_new_handlers (void *argument)
{
  const struct retry *retry = argument;
  for (;;)
    {
      new_handler_fn handler = current_new_handler ();
      void *pointer;

      if (handler == NULL)
        return NULL;
      handler ();
      entry_begin ();
      pointer = allocator_allocate (retry->size, retry->alignment,
                                    retry->caller_return);
      entry_end ();
      if (pointer != NULL)
        return pointer;
    }
}

/* The nothrow forms' own path: the throwing form's, returning NULL where
   that one throws (libstdc++'s calls the throwing form and catches).  */
static void *
new_or_null (size_t size, size_t alignment, uintptr_t caller_return,
             unsigned op, unsigned flags)
{
  if (!entry_begin ())
    return allocator_allocate_reentered (size, alignment);
  STACK_ENTRY_BEGIN ();
  void *pointer = allocator_allocate (size, alignment, caller_return);
  if (UNLIKELY (pointer == NULL) && current_new_handler () != NULL)
    {
      struct retry retry = { size, alignment, caller_return };
      entry_end ();
      pointer = call_catching (retry_after_new_handlers, &retry);
      entry_begin ();
    }
  STACK_ENTRY_END ();
  TRACE_ALLOCATION (op, flags, size, TRACED_ALIGNMENT (flags, alignment),
                    pointer);
  entry_end ();
  return pointer;
}

/* The nothrow forms' way to a replaced throwing form.  */
struct forwarded_new
{
  void *(*form) (size_t, size_t);
  size_t size, alignment;
};

static void *
call_forwarded_new (void *argument)
{
  const struct forwarded_new *call = argument;
  return call->form (call->size, call->alignment);
}

static void *
forward_catching (void *(*form) (size_t, size_t), size_t size, size_t alignment)
{
  struct forwarded_new call = { form, size, alignment };
  return call_catching (call_forwarded_new, &call);
}

/* A delete, recorded before the memory goes back.  */
static void
traced_delete (void *pointer, unsigned op, unsigned flags, size_t size,
               size_t alignment)
{
  if (!entry_begin ())
    {
      allocator_free_reentered (pointer);
      return;
    }
  trace_deallocation (op, flags, pointer, size, alignment);
  allocator_deallocate_entered (pointer);
  entry_end ();
}

#define CALLER ((uintptr_t) __builtin_return_address (0))
/* malloc's: allocator.c may hand out glibc's block (sampling).  */
#define DEFAULT_ALIGNMENT 16
#define NEW MEMPROF_TRACE_NEW
#define NEW_ARRAY MEMPROF_TRACE_NEW_ARRAY
#define DELETE MEMPROF_TRACE_DELETE
#define DELETE_ARRAY MEMPROF_TRACE_DELETE_ARRAY
#define NOTHROW MEMPROF_TRACE_NOTHROW
#define ALIGNED MEMPROF_TRACE_ALIGNED
#define SIZED MEMPROF_TRACE_SIZED

/* The always-on mode's path (allocator.c, malloc_left_out_quickly):
   glibc's block for an allocation that sampling leaves out; a delete
   while nobody watches (no hooks, events or trace) is deallocate's alone,
   which hands glibc's blocks straight back.  */
#define NEW_QUICKLY(size)                                                      \
  do                                                                           \
    {                                                                          \
      void *quick = allocator_new_quickly (size, CALLER);                      \
      if (LIKELY (quick != NULL))                                              \
        return quick;                                                          \
    }                                                                          \
  while (0)

static inline bool
unwatched (void)
{
  return atomic_load_explicit (&__memprof_unsampled_path, memory_order_relaxed)
         & UNSAMPLED_UNWATCHED;
}

/* The (size_t) forms, through the (size_t, size_t) calls of
   forward_catching.  */
static void *
plain_new (size_t size, size_t alignment)
{
  (void) alignment;
  return _Znwm (size);
}

static void *
plain_new_array (size_t size, size_t alignment)
{
  (void) alignment;
  return _Znam (size);
}

/* operator new (size_t), new[] (size_t) */
OPERATOR void *
_Znwm (size_t size)
{
  NEW_QUICKLY (size);
  return new_or_throw (size, DEFAULT_ALIGNMENT, CALLER, NEW, 0);
}
OPERATOR void *
_Znam (size_t size)
{
  if (!OWN_FORM (_Znwm))
    return _Znwm (size);
  NEW_QUICKLY (size);
  return new_or_throw (size, DEFAULT_ALIGNMENT, CALLER, NEW_ARRAY, 0);
}
/* (size_t, const std::nothrow_t &) */
OPERATOR void *
_ZnwmRKSt9nothrow_t (size_t size, const void *tag)
{
  (void) tag;
  if (!OWN_FORM (_Znwm))
    return forward_catching (plain_new, size, 0);
  return new_or_null (size, DEFAULT_ALIGNMENT, CALLER, NEW, NOTHROW);
}
OPERATOR void *
_ZnamRKSt9nothrow_t (size_t size, const void *tag)
{
  (void) tag;
  if (!OWN_FORM (_Znam) || !OWN_FORM (_Znwm))
    return forward_catching (plain_new_array, size, 0);
  return new_or_null (size, DEFAULT_ALIGNMENT, CALLER, NEW_ARRAY, NOTHROW);
}
/* (size_t, std::align_val_t): an alignment that is not a power of two
   throws std::bad_alloc at once, without the new-handler.  */
OPERATOR void *
_ZnwmSt11align_val_t (size_t size, size_t alignment)
{
  if (UNLIKELY (!is_power_of_two (alignment)))
    throw_bad_alloc ("was given an alignment that is not a power of two", size);
  return new_or_throw (size, alignment, CALLER, NEW, ALIGNED);
}
OPERATOR void *
_ZnamSt11align_val_t (size_t size, size_t alignment)
{
  if (!OWN_FORM (_ZnwmSt11align_val_t))
    return _ZnwmSt11align_val_t (size, alignment);
  if (UNLIKELY (!is_power_of_two (alignment)))
    throw_bad_alloc ("was given an alignment that is not a power of two", size);
  return new_or_throw (size, alignment, CALLER, NEW_ARRAY, ALIGNED);
}
/* (size_t, std::align_val_t, const std::nothrow_t &) */
OPERATOR void *
_ZnwmSt11align_val_tRKSt9nothrow_t (size_t size, size_t alignment,
                                    const void *tag)
{
  (void) tag;
  if (!OWN_FORM (_ZnwmSt11align_val_t))
    return forward_catching (_ZnwmSt11align_val_t, size, alignment);
  if (UNLIKELY (!is_power_of_two (alignment)))
    return NULL;
  return new_or_null (size, alignment, CALLER, NEW, NOTHROW | ALIGNED);
}
OPERATOR void *
_ZnamSt11align_val_tRKSt9nothrow_t (size_t size, size_t alignment,
                                    const void *tag)
{
  (void) tag;
  if (!OWN_FORM (_ZnamSt11align_val_t) || !OWN_FORM (_ZnwmSt11align_val_t))
    return forward_catching (_ZnamSt11align_val_t, size, alignment);
  if (UNLIKELY (!is_power_of_two (alignment)))
    return NULL;
  return new_or_null (size, alignment, CALLER, NEW_ARRAY, NOTHROW | ALIGNED);
}

/* operator delete (void *), delete[] (void *) */
OPERATOR void
_ZdlPv (void *pointer)
{
  if (LIKELY (unwatched ()))
    return allocator_deallocate (pointer);
  traced_delete (pointer, DELETE, 0, 0, 0);
}
OPERATOR void
_ZdaPv (void *pointer)
{
  if (!OWN_FORM (_ZdlPv))
    return _ZdlPv (pointer);
  if (LIKELY (unwatched ()))
    return allocator_deallocate (pointer);
  traced_delete (pointer, DELETE_ARRAY, 0, 0, 0);
}
/* (void *, size_t) */
OPERATOR void
_ZdlPvm (void *pointer, size_t size)
{
  if (!OWN_FORM (_ZdlPv))
    return _ZdlPv (pointer);
  if (LIKELY (unwatched ()))
    return allocator_deallocate (pointer);
  traced_delete (pointer, DELETE, SIZED, size, 0);
}
OPERATOR void
_ZdaPvm (void *pointer, size_t size)
{
  if (!OWN_FORM (_ZdaPv) || !OWN_FORM (_ZdlPv))
    return _ZdaPv (pointer);
  if (LIKELY (unwatched ()))
    return allocator_deallocate (pointer);
  traced_delete (pointer, DELETE_ARRAY, SIZED, size, 0);
}
/* (void *, const std::nothrow_t &) */
OPERATOR void
_ZdlPvRKSt9nothrow_t (void *pointer, const void *tag)
{
  (void) tag;
  if (!OWN_FORM (_ZdlPv))
    return _ZdlPv (pointer);
  traced_delete (pointer, DELETE, NOTHROW, 0, 0);
}
OPERATOR void
_ZdaPvRKSt9nothrow_t (void *pointer, const void *tag)
{
  (void) tag;
  if (!OWN_FORM (_ZdaPv) || !OWN_FORM (_ZdlPv))
    return _ZdaPv (pointer);
  traced_delete (pointer, DELETE_ARRAY, NOTHROW, 0, 0);
}
/* (void *, std::align_val_t) */
OPERATOR void
_ZdlPvSt11align_val_t (void *pointer, size_t alignment)
{
  traced_delete (pointer, DELETE, ALIGNED, 0, alignment);
}
OPERATOR void
_ZdaPvSt11align_val_t (void *pointer, size_t alignment)
{
  if (!OWN_FORM (_ZdlPvSt11align_val_t))
    return _ZdlPvSt11align_val_t (pointer, alignment);
  traced_delete (pointer, DELETE_ARRAY, ALIGNED, 0, alignment);
}
/* (void *, size_t, std::align_val_t) */
OPERATOR void
_ZdlPvmSt11align_val_t (void *pointer, size_t size, size_t alignment)
{
  if (!OWN_FORM (_ZdlPvSt11align_val_t))
    return _ZdlPvSt11align_val_t (pointer, alignment);
  traced_delete (pointer, DELETE, ALIGNED | SIZED, size, alignment);
}
OPERATOR void
_ZdaPvmSt11align_val_t (void *pointer, size_t size, size_t alignment)
{
  if (!OWN_FORM (_ZdaPvSt11align_val_t) || !OWN_FORM (_ZdlPvSt11align_val_t))
    return _ZdaPvSt11align_val_t (pointer, alignment);
  traced_delete (pointer, DELETE_ARRAY, ALIGNED | SIZED, size, alignment);
}
/* (void *, std::align_val_t, const std::nothrow_t &) */
OPERATOR void
_ZdlPvSt11align_val_tRKSt9nothrow_t (void *pointer, size_t alignment,
                                     const void *tag)
{
  (void) tag;
  if (!OWN_FORM (_ZdlPvSt11align_val_t))
    return _ZdlPvSt11align_val_t (pointer, alignment);
  traced_delete (pointer, DELETE, NOTHROW | ALIGNED, 0, alignment);
}
OPERATOR void
_ZdaPvSt11align_val_tRKSt9nothrow_t (void *pointer, size_t alignment,
                                     const void *tag)
{
  (void) tag;
  if (!OWN_FORM (_ZdaPvSt11align_val_t) || !OWN_FORM (_ZdlPvSt11align_val_t))
    return _ZdaPvSt11align_val_t (pointer, alignment);
  traced_delete (pointer, DELETE_ARRAY, NOTHROW | ALIGNED, 0, alignment);
}
