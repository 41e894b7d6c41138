/* Under the profiling runtime (linked before libmemprof_hint, as
   `pkg-config --libs memprof` then `pkg-config --libs memprof-hint`),
   every hinted entry point calls the unhinted function: the blocks are
   libmemprof's, its free and delete take them, and the profile is the
   one the same program makes with the plain calls (-DUNHINTED), call site
   for call site.  Each call stands on a line of its own so that run.py
   can compare the two profiles site by site.  */

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "memprof/hint.h"

#ifdef UNHINTED
#define MALLOC(size, hint) malloc (size)
#define CALLOC(count, size, hint) calloc (count, size)
#define REALLOC(pointer, size, hint) realloc (pointer, size)
#define ALIGNED_ALLOC(alignment, size, hint) aligned_alloc (alignment, size)
#define MEMALIGN(alignment, size, hint) memalign (alignment, size)
#define POSIX_MEMALIGN(result, alignment, size, hint)                          \
  posix_memalign (result, alignment, size)
#define STRDUP(string, hint) strdup (string)
#define STRNDUP(string, limit, hint) strndup (string, limit)
#define HINT(value)
#define NEW_HINT(value)
#else
#define MALLOC(size, hint) __memprof_hint_malloc (size, hint)
#define CALLOC(count, size, hint) __memprof_hint_calloc (count, size, hint)
#define REALLOC(pointer, size, hint)                                           \
  __memprof_hint_realloc (pointer, size, hint)
#define ALIGNED_ALLOC(alignment, size, hint)                                   \
  __memprof_hint_aligned_alloc (alignment, size, hint)
#define MEMALIGN(alignment, size, hint)                                        \
  __memprof_hint_memalign (alignment, size, hint)
#define POSIX_MEMALIGN(result, alignment, size, hint)                          \
  __memprof_hint_posix_memalign (result, alignment, size, hint)
#define STRDUP(string, hint) __memprof_hint_strdup (string, hint)
#define STRNDUP(string, limit, hint)                                           \
  __memprof_hint_strndup (string, limit, hint)
#define HINT(value) , static_cast<__hot_cold_t> (value)
#define NEW_HINT(value) (static_cast<__hot_cold_t> (value))
#endif

extern "C" void *memalign (size_t, size_t);

static void *volatile sink;

static void
touch (void *block, size_t size)
{
  std::memset (block, 1, size);
  sink = block;
}

struct Node
{
  long value[10];
};

int
main ()
{
  for (int round = 0; round < 3; round++)
    {
      void *block, *aligned = nullptr;
      char *text;
      Node *node;

      block = MALLOC (101, MEMPROF_HINT_COLD);
      touch (block, 101);
      free (block);
      block = CALLOC (3, 34, MEMPROF_HINT_HOT);
      touch (block, 102);
      block = REALLOC (block, 2003, MEMPROF_HINT_HOT);
      touch (block, 2003);
      free (block);
      block = ALIGNED_ALLOC (256, 1024, MEMPROF_HINT_COLD);
      touch (block, 1024);
      free (block);
      block = MEMALIGN (4096, 105, MEMPROF_HINT_HOT);
      touch (block, 105);
      free (block);
      if (POSIX_MEMALIGN (&aligned, 128, 106, MEMPROF_HINT_COLD) == 0)
        touch (aligned, 106);
      free (aligned);
      text = STRDUP ("forwarded to strdup", MEMPROF_HINT_HOT);
      sink = text;
      free (text);
      text = STRNDUP ("forwarded to strndup", 9, MEMPROF_HINT_COLD);
      sink = text;
      free (text);

      block = ::operator new (107 HINT (1));
      touch (block, 107);
      ::operator delete (block);
      block = ::operator new[] (108 HINT (254));
      touch (block, 108);
      ::operator delete[] (block);
      block = ::operator new (109, std::nothrow HINT (1));
      touch (block, 109);
      ::operator delete (block);
      block = ::operator new[] (110, std::nothrow HINT (254));
      touch (block, 110);
      ::operator delete[] (block);
      block = ::operator new (111, std::align_val_t (64) HINT (1));
      touch (block, 111);
      ::operator delete (block, std::align_val_t (64));
      block = ::operator new[] (112, std::align_val_t (64) HINT (254));
      touch (block, 112);
      ::operator delete[] (block, std::align_val_t (64));
      block
          = ::operator new (113, std::align_val_t (64), std::nothrow HINT (1));
      touch (block, 113);
      ::operator delete (block, std::align_val_t (64));
      block = ::operator new[] (114, std::align_val_t (64),
                                std::nothrow HINT (254));
      touch (block, 114);
      ::operator delete[] (block, std::align_val_t (64));
      node = new NEW_HINT (254) Node ();
      touch (node, sizeof *node);
      delete node;
    }
  std::printf ("forward done\n");
  return 0;
}
