// operator new as libstdc++ has it, when the program replaces nothing:
// an alignment that is not a power of two is std::bad_alloc (the
// aligned forms) or a null pointer (their nothrow forms), without the
// new-handler; a failed nothrow new calls the new-handler until it
// succeeds, gives up or throws, as the throwing form does, and returns
// null when it throws.  The output is the same with and without the
// runtime.
#include <cstdio>
#include <new>

static int handler_calls;

static void
give_up_on_third_call ()
{
  if (++handler_calls == 3)
    std::set_new_handler (nullptr);
}

static void
throw_something ()
{
  handler_calls++;
  throw 42;
}

static void
aligned_throwing (const char *what, std::size_t alignment, bool array)
{
  try
    {
      void *pointer = array ? operator new[] (64, std::align_val_t (alignment))
                            :
                            operator new (64, std::align_val_t (alignment));
      std::printf (
          "%s %zu: memory, aligned %d\n", what, alignment,
          (int) (reinterpret_cast<std::size_t> (pointer) % alignment == 0));
      if (array)
        operator delete[] (pointer, std::align_val_t (alignment));
      else
        operator delete (pointer, std::align_val_t (alignment));
    }
  catch (const std::bad_alloc &)
    {
      std::printf ("%s %zu: bad_alloc\n", what, alignment);
    }
}

static void
aligned_nothrow (const char *what, std::size_t alignment, bool array)
{
  void *pointer
      = array ? operator new[] (64, std::align_val_t (alignment), std::nothrow)
              :
              operator new (64, std::align_val_t (alignment), std::nothrow);
  std::printf ("%s %zu: %s\n", what, alignment, pointer ? "memory" : "null");
  if (array)
    operator delete[] (pointer, std::align_val_t (alignment), std::nothrow);
  else
    operator delete (pointer, std::align_val_t (alignment), std::nothrow);
}

int
main ()
{
  const std::size_t alignments[] = { 0, 3, 24, 100, 16, 256 };
  std::set_new_handler (throw_something); // never called for alignment
  for (std::size_t alignment : alignments)
    {
      aligned_throwing ("new", alignment, false);
      aligned_throwing ("new[]", alignment, true);
      aligned_nothrow ("nothrow new", alignment, false);
      aligned_nothrow ("nothrow new[]", alignment, true);
    }
  std::printf ("handler calls for alignments: %d\n", handler_calls);

  const std::size_t too_much = std::size_t (1) << 62;
  handler_calls = 0;
  std::set_new_handler (give_up_on_third_call);
  void *pointer = operator new (too_much, std::nothrow);
  std::printf ("nothrow new, handler gives up: %s after %d calls\n",
               pointer ? "memory" : "null", handler_calls);
  handler_calls = 0;
  std::set_new_handler (give_up_on_third_call);
  pointer = operator new[] (too_much, std::nothrow);
  std::printf ("nothrow new[], handler gives up: %s after %d calls\n",
               pointer ? "memory" : "null", handler_calls);
  handler_calls = 0;
  std::set_new_handler (throw_something);
  pointer = operator new (too_much, std::align_val_t (64), std::nothrow);
  std::printf ("aligned nothrow new, handler throws: %s after %d calls\n",
               pointer ? "memory" : "null", handler_calls);
  handler_calls = 0;
  try
    {
      pointer = operator new (too_much);
      std::printf ("new, handler throws: memory\n");
    }
  catch (int thrown)
    {
      std::printf ("new, handler throws: %d after %d calls\n", thrown,
                   handler_calls);
    }
  return 0;
}
