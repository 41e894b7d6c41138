/* libmemprof_hint: allocation entry points that take a hint of how often
   the memory will be accessed, the calls that profile feedback
   (gcc -fplugin-arg-memprof-use=PROFILE) writes in place of the
   allocation calls the profile found cold or hot.  They can also be
   called by hand.  Link with `pkg-config --libs memprof-hint`; see
   docs/hint.md.

   The hint is tcmalloc's __hot_cold_t: 0 means rarely accessed, 255 very
   frequently; values below 128 are cold, 128 and above hot.  LLVM's
   feedback passes 1 (cold), 128 (not cold) and 254 (hot), the three
   MEMPROF_HINT_ values below.  Cold allocations go to one jemalloc arena,
   hot ones to another; everything else stays in jemalloc's default arenas.

   Each function has the semantics of the unhinted one (results, errno,
   NULL): memory from any of them is freed or resized by the program's
   plain free, realloc and operator delete, which are jemalloc's once the
   program is linked as pkg-config says.  When the GCC MemProf profiling
   runtime (libmemprof) is in the process, or when the program's malloc is
   not jemalloc's, every entry point calls the unhinted function instead.
   Every function is safe to call from any thread.  */

#ifndef MEMPROF_HINT_H
#define MEMPROF_HINT_H

#include <stddef.h>

/* Hint values: below MEMPROF_HINT_HOT_MIN is cold, from it on hot.  */
#define MEMPROF_HINT_COLD 1
#define MEMPROF_HINT_NOTCOLD 128
#define MEMPROF_HINT_HOT 254
#define MEMPROF_HINT_HOT_MIN 128

#ifdef __cplusplus
extern "C" {
#endif

void *__memprof_hint_malloc (size_t size, unsigned char hint)
    __attribute__ ((__nothrow__, __malloc__, __alloc_size__ (1),
                    __warn_unused_result__));
void *__memprof_hint_calloc (size_t count, size_t size, unsigned char hint)
    __attribute__ ((__nothrow__, __malloc__, __alloc_size__ (1, 2),
                    __warn_unused_result__));
void *__memprof_hint_realloc (void *pointer, size_t size, unsigned char hint)
    __attribute__ ((__nothrow__, __alloc_size__ (2), __warn_unused_result__));
void *__memprof_hint_aligned_alloc (size_t alignment, size_t size,
                                    unsigned char hint)
    __attribute__ ((__nothrow__, __malloc__, __alloc_align__ (1),
                    __alloc_size__ (2), __warn_unused_result__));
int __memprof_hint_posix_memalign (void **result, size_t alignment, size_t size,
                                   unsigned char hint)
    __attribute__ ((__nothrow__, __nonnull__ (1), __warn_unused_result__));
void *__memprof_hint_memalign (size_t alignment, size_t size,
                               unsigned char hint)
    __attribute__ ((__nothrow__, __malloc__, __alloc_align__ (1),
                    __alloc_size__ (2), __warn_unused_result__));
char *__memprof_hint_strdup (const char *string, unsigned char hint)
    __attribute__ ((__nothrow__, __malloc__, __nonnull__ (1)));
char *__memprof_hint_strndup (const char *string, size_t limit,
                              unsigned char hint)
    __attribute__ ((__nothrow__, __malloc__, __nonnull__ (1)));

#ifdef __cplusplus
}

/* tcmalloc's hinted operator new and new[] (tcmalloc/new_extension.h),
   with the same mangled names, so a program written for tcmalloc's
   overloads links against this library unchanged.  Delete with the plain
   operator delete.  */
#include <cstdint>
#include <new>

enum class __hot_cold_t : std::uint8_t;

void *operator new (std::size_t size, __hot_cold_t hint) noexcept (false);
void *operator new (std::size_t size, const std::nothrow_t &,
                    __hot_cold_t hint) noexcept;
void *operator new[] (std::size_t size, __hot_cold_t hint) noexcept (false);
void *operator new[] (std::size_t size, const std::nothrow_t &,
                      __hot_cold_t hint) noexcept;
#ifdef __cpp_aligned_new
void *operator new (std::size_t size, std::align_val_t alignment,
                    __hot_cold_t hint) noexcept (false);
void *operator new (std::size_t size, std::align_val_t alignment,
                    const std::nothrow_t &, __hot_cold_t hint) noexcept;
void *operator new[] (std::size_t size, std::align_val_t alignment,
                      __hot_cold_t hint) noexcept (false);
void *operator new[] (std::size_t size, std::align_val_t alignment,
                      const std::nothrow_t &, __hot_cold_t hint) noexcept;
#endif
#endif /* __cplusplus */

#endif /* MEMPROF_HINT_H */
