// Malloc and free hooks see C++ new and delete: plain, array, aligned,
// nothrow and sized forms each reach them once, with the size asked.
#include <cstdio>
#include <new>

#include <sanitizer/allocator_interface.h>

// volatile: see hooks.c.
static volatile std::size_t mallocs, frees, bytes;

static void
on_malloc (const volatile void *pointer, std::size_t size)
{
  (void) pointer;
  mallocs = mallocs + 1;
  bytes = bytes + size;
}

static void
on_free (const volatile void *pointer)
{
  (void) pointer;
  frees = frees + 1;
}

struct alignas (128) wide
{
  char bytes[128];
};

int
main ()
{
  __sanitizer_install_malloc_and_free_hooks (on_malloc, on_free);
  int *volatile one = new int (1); // 4 bytes; sized delete
  delete one;
  int *volatile many = new int[10]; // 40 bytes
  delete[] many;
  wide *volatile aligned = new wide; // 128 bytes, aligned new
  delete aligned;
  int *volatile nothrow = new (std::nothrow) int (2); // 4 bytes
  delete nothrow;
  std::printf ("mallocs %zu frees %zu bytes %zu\n", (std::size_t) mallocs,
               (std::size_t) frees, (std::size_t) bytes);
  return 0;
}
