/* tcmalloc's hinted operator new overloads, declared here exactly as
   tcmalloc/malloc_extension.h and tcmalloc/new_extension.h declare them
   (not from memprof/hint.h): the calls below link against
   libmemprof_hint only if its mangled names are tcmalloc's.  Built a
   second time with -DWITH_HINT_H, which also includes memprof/hint.h:
   both sets of declarations must agree.

   Checks that each of the 8 overloads returns usable, aligned memory in
   the hint's arena that plain delete frees; that the throwing forms throw
   std::bad_alloc, after calling the new-handler until it gives up; that
   the nothrow forms return nullptr; and that new-expressions with a hint
   pick these overloads.  */

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <new>

#ifdef WITH_HINT_H
#include "memprof/hint.h"
#endif

enum class __hot_cold_t : uint8_t;
namespace tcmalloc
{
using hot_cold_t = __hot_cold_t;
}

void *operator new (size_t size, tcmalloc::hot_cold_t hot_cold)
    noexcept (false);
void *operator new (size_t size, const std::nothrow_t &,
                    tcmalloc::hot_cold_t hot_cold) noexcept;
void *operator new[] (size_t size, tcmalloc::hot_cold_t hot_cold)
    noexcept (false);
void *operator new[] (size_t size, const std::nothrow_t &,
                      tcmalloc::hot_cold_t hot_cold) noexcept;
void *operator new (size_t size, std::align_val_t alignment,
                    tcmalloc::hot_cold_t hot_cold) noexcept (false);
void *operator new (size_t size, std::align_val_t alignment,
                    const std::nothrow_t &,
                    tcmalloc::hot_cold_t hot_cold) noexcept;
void *operator new[] (size_t size, std::align_val_t alignment,
                      tcmalloc::hot_cold_t hot_cold) noexcept (false);
void *operator new[] (size_t size, std::align_val_t alignment,
                      const std::nothrow_t &,
                      tcmalloc::hot_cold_t hot_cold) noexcept;

#include "check.h"

static const tcmalloc::hot_cold_t cold = static_cast<tcmalloc::hot_cold_t> (1);
static const tcmalloc::hot_cold_t hot = static_cast<tcmalloc::hot_cold_t> (254);
static unsigned cold_arena, hot_arena;

/* Keep GCC from removing allocations whose results look unused.  */
static void *volatile sink;

static bool
usable_in (void *block, size_t size, size_t alignment, unsigned arena)
{
  if (block == nullptr || reinterpret_cast<uintptr_t> (block) % alignment)
    return false;
  std::memset (block, 0x3c, size);
  sink = block;
  return arena_of (block) == arena;
}

static int handler_calls;

static void
give_up_on_second_call ()
{
  if (++handler_calls == 2)
    std::set_new_handler (nullptr);
}

struct Node
{
  Node *next;
  long value[5];
};

struct alignas (256) Wide
{
  char bytes[300];
};

int
main ()
{
  const size_t huge = SIZE_MAX / 4;

  {
    void *c = ::operator new (8, cold), *h = ::operator new (8, hot);
    cold_arena = arena_of (c), hot_arena = arena_of (h);
    ::operator delete (c);
    ::operator delete (h);
    CHECK (cold_arena != hot_arena && cold_arena >= automatic_arenas ()
               && hot_arena >= automatic_arenas (),
           "operator new (size_t, __hot_cold_t): cold and hot in two "
           "arenas of their own (%u, %u)",
           cold_arena, hot_arena);
  }

  for (tcmalloc::hot_cold_t hint : { cold, hot })
    {
      unsigned arena = hint == cold ? cold_arena : hot_arena;
      const char *name = hint == cold ? "cold" : "hot";
      void *block;

      for (size_t size :
           { size_t (0), size_t (24), size_t (5000), size_t (100000) })
        {
          /* jemalloc's default alignment, as its plain operator new's: 16
             from 16 bytes on, 8 below.  */
          size_t natural = size >= 16 ? 16 : 8;

          block = ::operator new (size, hint);
          CHECK (usable_in (block, size, natural, arena),
                 "new (%zu, %s): usable, in the arena", size, name);
          ::operator delete (block);
          block = ::operator new[] (size, hint);
          CHECK (usable_in (block, size, natural, arena),
                 "new[] (%zu, %s): usable, in the arena", size, name);
          ::operator delete[] (block);
          block = ::operator new (size, std::nothrow, hint);
          CHECK (usable_in (block, size, natural, arena),
                 "new (%zu, nothrow, %s): usable, in the arena", size, name);
          ::operator delete (block, std::nothrow);
          block = ::operator new[] (size, std::nothrow, hint);
          CHECK (usable_in (block, size, natural, arena),
                 "new[] (%zu, nothrow, %s): usable, in the arena", size, name);
          ::operator delete[] (block, std::nothrow);
          for (size_t alignment :
               { size_t (32), size_t (4096), size_t (1 << 16) })
            {
              std::align_val_t align = std::align_val_t (alignment);
              block = ::operator new (size, align, hint);
              CHECK (usable_in (block, size, alignment, arena),
                     "new (%zu, align %zu, %s): aligned, usable", size,
                     alignment, name);
              ::operator delete (block, align);
              block = ::operator new[] (size, align, hint);
              CHECK (usable_in (block, size, alignment, arena),
                     "new[] (%zu, align %zu, %s): aligned, usable", size,
                     alignment, name);
              ::operator delete[] (block, size, align);
              block = ::operator new (size, align, std::nothrow, hint);
              CHECK (usable_in (block, size, alignment, arena),
                     "new (%zu, align %zu, nothrow, %s): aligned, usable", size,
                     alignment, name);
              ::operator delete (block, align, std::nothrow);
              block = ::operator new[] (size, align, std::nothrow, hint);
              CHECK (usable_in (block, size, alignment, arena),
                     "new[] (%zu, align %zu, nothrow, %s): aligned, usable",
                     size, alignment, name);
              ::operator delete[] (block, align, std::nothrow);
            }
        }
    }

  /* New-expressions with a hint as placement argument.  */
  {
    Node *node = new (hot) Node ();
    Node *nodes = new (cold) Node[10];
    Wide *wide = new (hot) Wide;
    Wide *wides = new (std::nothrow, cold) Wide[3];
    CHECK (arena_of (node) == hot_arena && node->next == nullptr,
           "new (hot) Node (): value-initialized, in the hot arena");
    CHECK (arena_of (nodes) == cold_arena, "new (cold) Node[10]");
    CHECK (arena_of (wide) == hot_arena
               && reinterpret_cast<uintptr_t> (wide) % 256 == 0,
           "new (hot) over-aligned type: the aligned overload, 256-aligned");
    CHECK (wides != nullptr && arena_of (wides) == cold_arena
               && reinterpret_cast<uintptr_t> (wides) % 256 == 0,
           "new (std::nothrow, cold) over-aligned array");
    delete node;
    delete[] nodes;
    delete wide;
    delete[] wides;
  }

  /* Failures.  */
  for (tcmalloc::hot_cold_t hint : { cold, hot })
    {
      bool thrown = false;

      handler_calls = 0;
      std::set_new_handler (give_up_on_second_call);
      try
        {
          sink = ::operator new (huge, hint);
        }
      catch (const std::bad_alloc &)
        {
          thrown = true;
        }
      CHECK (thrown && handler_calls == 2,
             "new (SIZE_MAX / 4, hint %u): calls the new-handler until it "
             "is removed (%d calls), then throws std::bad_alloc",
             (unsigned) hint, handler_calls);

      thrown = false;
      try
        {
          sink = ::operator new[] (huge, std::align_val_t (64), hint);
        }
      catch (const std::bad_alloc &)
        {
          thrown = true;
        }
      CHECK (thrown, "new[] (SIZE_MAX / 4, align 64): throws std::bad_alloc");

      thrown = false;
      try
        {
          sink = ::operator new (64, std::align_val_t (48), hint);
        }
      catch (const std::bad_alloc &)
        {
          thrown = true;
        }
      CHECK (thrown, "new (64, align 48): an alignment that is no power of "
                     "two throws std::bad_alloc, as libstdc++'s does");

      handler_calls = 0;
      std::set_new_handler (give_up_on_second_call);
      CHECK (::operator new (huge, std::nothrow, hint)
                 == nullptr && ::operator new[] (huge, std::nothrow, hint)
                 == nullptr && ::operator new (huge, std::align_val_t (64),
                                               std::nothrow, hint)
                 == nullptr && ::operator new[] (64, std::align_val_t (48),
                                                 std::nothrow, hint)
                 == nullptr &&handler_calls == 0,
             "the nothrow forms return nullptr on failure, without calling "
             "the new-handler");
      std::set_new_handler (nullptr);
    }
  std::printf ("new_tcmalloc done: %d failed\n", check_failures);
  return check_failures != 0;
}
