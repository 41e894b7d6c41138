/* tcmalloc's hinted operator new and new[] (tcmalloc/new_extension.h):
   plain, nothrow, aligned and aligned nothrow, each taking a trailing
   __hot_cold_t.  Written in C under their mangled names, as the runtime's
   new_delete.c writes the unhinted ones, so the library needs no C++
   runtime of its own.

   At the ABI level `enum class __hot_cold_t : uint8_t' is an unsigned
   char, std::align_val_t a size_t and `const std::nothrow_t &' a pointer.

   Throwing forms follow operator new: on failure call the installed
   new-handler and retry, or throw std::bad_alloc (both from libstdc++
   through weak references, which every C++ program resolves).  An
   alignment that is not a power of two fails as in libstdc++.  Nothrow
   forms return NULL without calling the new-handler: C cannot catch what
   a handler throws.  When forwarding, each calls the unhinted operator of
   its form, which the program's C++ runtime (or libmemprof) defines.  */

#include "hint-internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

typedef void (*new_handler_fn) (void);
extern new_handler_fn _ZSt15get_new_handlerv (void) __attribute__ ((weak));
extern void _ZSt17__throw_bad_allocv (void) __attribute__ ((weak, noreturn));

/* The unhinted operators new and new[]: (size_t), (size_t, nothrow_t),
   (size_t, align_val_t), (size_t, align_val_t, nothrow_t).  */
extern void *_Znwm (size_t) __attribute__ ((weak));
extern void *_Znam (size_t) __attribute__ ((weak));
extern void *_ZnwmRKSt9nothrow_t (size_t, const void *) __attribute__ ((weak));
extern void *_ZnamRKSt9nothrow_t (size_t, const void *) __attribute__ ((weak));
extern void *_ZnwmSt11align_val_t (size_t, size_t) __attribute__ ((weak));
extern void *_ZnamSt11align_val_t (size_t, size_t) __attribute__ ((weak));
extern void *_ZnwmSt11align_val_tRKSt9nothrow_t (size_t, size_t, const void *)
    __attribute__ ((weak));
extern void *_ZnamSt11align_val_tRKSt9nothrow_t (size_t, size_t, const void *)
    __attribute__ ((weak));

static void __attribute__ ((noreturn)) throw_bad_alloc (void)
{
  static const char message[]
      = "libmemprof_hint: a hinted operator new failed and no C++ runtime "
        "is loaded to throw std::bad_alloc; aborting\n";

  if (_ZSt17__throw_bad_allocv)
    _ZSt17__throw_bad_allocv ();
  if (write (STDERR_FILENO, message, sizeof message - 1) < 0)
    abort ();
  abort ();
}

/* FLAGS: hint_flags, plus the alignment's for the aligned forms.  */
static void *
new_or_throw (size_t size, int flags)
{
  for (;;)
    {
      void *pointer = hint_allocate (size, flags);
      new_handler_fn handler;

      if (LIKELY (pointer != NULL))
        return pointer;
      handler = _ZSt15get_new_handlerv ? _ZSt15get_new_handlerv () : NULL;
      if (handler == NULL)
        throw_bad_alloc ();
      handler ();
    }
}

static void *
new_aligned_or_throw (size_t size, size_t alignment, unsigned char hint)
{
  if (UNLIKELY (!is_power_of_two (alignment)))
    throw_bad_alloc ();
  return new_or_throw (size, hint_flags (hint) | alignment_flags (alignment));
}

static void *
new_aligned_or_null (size_t size, size_t alignment, unsigned char hint)
{
  if (UNLIKELY (!is_power_of_two (alignment)))
    return NULL;
  return hint_allocate (size, hint_flags (hint) | alignment_flags (alignment));
}

/* operator new (size_t, __hot_cold_t), new[] (size_t, __hot_cold_t) */
HINT_EXPORT void *
_Znwm12__hot_cold_t (size_t size, unsigned char hint)
{
  if (UNLIKELY (hint_forwarding ()))
    return _Znwm (size);
  return new_or_throw (size, hint_flags (hint));
}
HINT_EXPORT void *
_Znam12__hot_cold_t (size_t size, unsigned char hint)
{
  if (UNLIKELY (hint_forwarding ()))
    return _Znam (size);
  return new_or_throw (size, hint_flags (hint));
}
/* (size_t, const std::nothrow_t &, __hot_cold_t) */
HINT_EXPORT void *
_ZnwmRKSt9nothrow_t12__hot_cold_t (size_t size, const void *tag,
                                   unsigned char hint)
{
  if (UNLIKELY (hint_forwarding ()))
    return _ZnwmRKSt9nothrow_t (size, tag);
  return hint_allocate (size, hint_flags (hint));
}
HINT_EXPORT void *
_ZnamRKSt9nothrow_t12__hot_cold_t (size_t size, const void *tag,
                                   unsigned char hint)
{
  if (UNLIKELY (hint_forwarding ()))
    return _ZnamRKSt9nothrow_t (size, tag);
  return hint_allocate (size, hint_flags (hint));
}
/* (size_t, std::align_val_t, __hot_cold_t) */
HINT_EXPORT void *
_ZnwmSt11align_val_t12__hot_cold_t (size_t size, size_t alignment,
                                    unsigned char hint)
{
  if (UNLIKELY (hint_forwarding ()))
    return _ZnwmSt11align_val_t (size, alignment);
  return new_aligned_or_throw (size, alignment, hint);
}
HINT_EXPORT void *
_ZnamSt11align_val_t12__hot_cold_t (size_t size, size_t alignment,
                                    unsigned char hint)
{
  if (UNLIKELY (hint_forwarding ()))
    return _ZnamSt11align_val_t (size, alignment);
  return new_aligned_or_throw (size, alignment, hint);
}
/* (size_t, std::align_val_t, const std::nothrow_t &, __hot_cold_t) */
HINT_EXPORT void *
_ZnwmSt11align_val_tRKSt9nothrow_t12__hot_cold_t (size_t size, size_t alignment,
                                                  const void *tag,
                                                  unsigned char hint)
{
  if (UNLIKELY (hint_forwarding ()))
    return _ZnwmSt11align_val_tRKSt9nothrow_t (size, alignment, tag);
  return new_aligned_or_null (size, alignment, hint);
}
HINT_EXPORT void *
_ZnamSt11align_val_tRKSt9nothrow_t12__hot_cold_t (size_t size, size_t alignment,
                                                  const void *tag,
                                                  unsigned char hint)
{
  if (UNLIKELY (hint_forwarding ()))
    return _ZnamSt11align_val_tRKSt9nothrow_t (size, alignment, tag);
  return new_aligned_or_null (size, alignment, hint);
}
