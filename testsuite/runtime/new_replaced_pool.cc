// A program that replaces only the basic forms of operator new and
// delete (plain and aligned) with a pool that never calls malloc, as game
// engines and databases do.  The standard makes every other form call
// these: new[], nothrow, sized and array deletes.  Each replacement
// counts its calls and checks that the pointer it frees is its own; the
// counts are printed, so the output is the same with and without the
// runtime only if every form reached the replacements.  The pool reports
// its blocks through <memprof/heap.h>: with the runtime, `make_widgets'
// and `make_aligned' get contexts of their own, with access counts.
// Every block goes through `keep' (not inlined), so that no new/delete
// pair is elided by the optimizers (C++14 allows it).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memprof/heap.h>
#include <new>

namespace
{
const std::size_t slot_size = 256;
const int slot_count = 64;
alignas (256) char slots[slot_count][slot_size];
bool in_use[slot_count];
unsigned heap;
int news, deletes, aligned_news, aligned_deletes;

void *
take (std::size_t size)
{
  if (size > slot_size)
    return nullptr;
  for (int i = 0; i < slot_count; i++)
    if (!in_use[i])
      {
        in_use[i] = true;
        memprof_heap_alloc (heap, slots[i], size);
        return slots[i];
      }
  return nullptr;
}

void
give_back (void *pointer)
{
  std::uintptr_t offset = reinterpret_cast<std::uintptr_t> (pointer)
                          - reinterpret_cast<std::uintptr_t> (&slots[0][0]);
  if (offset >= sizeof slots || offset % slot_size != 0)
    {
      std::printf ("FAIL: delete of a pointer the pool never gave\n");
      std::_Exit (1);
    }
  memprof_heap_free (heap, pointer);
  in_use[offset / slot_size] = false;
}
}

void *
operator new (std::size_t size)
{
  news++;
  if (void *pointer = take (size))
    return pointer;
  throw std::bad_alloc ();
}

void
operator delete (void *pointer) noexcept
{
  if (pointer == nullptr)
    return;
  deletes++;
  give_back (pointer);
}

void *
operator new (std::size_t size, std::align_val_t alignment)
{
  aligned_news++;
  if (static_cast<std::size_t> (alignment) > slot_size)
    throw std::bad_alloc ();
  if (void *pointer = take (size))
    return pointer;
  throw std::bad_alloc ();
}

void
operator delete (void *pointer, std::align_val_t) noexcept
{
  if (pointer == nullptr)
    return;
  aligned_deletes++;
  give_back (pointer);
}

template <typename T>
__attribute__ ((noipa)) T *
keep (T *pointer)
{
  return pointer;
}

struct widget
{
  int values[20];
};

struct alignas (128) aligned_widget
{
  int values[8];
};

__attribute__ ((noipa)) static widget *
make_widgets (int count)
{
  widget *widgets = keep (new widget[count]);
  for (int i = 0; i < count; i++)
    widgets[i].values[0] = i;
  return widgets;
}

__attribute__ ((noipa)) static aligned_widget *
make_aligned (void)
{
  aligned_widget *one = keep (new aligned_widget);
  one->values[0] = 7;
  return one;
}

int
main ()
{
  heap = memprof_heap_register ("replaced operator new");
  int sum = 0;

  widget *single = keep (new widget); // new, sized delete
  single->values[0] = 1;
  delete single;
  widget *many = make_widgets (3); // new[], delete[]
  sum += many[2].values[0];
  delete[] many;
  int *quiet = keep (new (std::nothrow) int (5)); // nothrow new
  sum += *quiet;
  operator delete (quiet, std::nothrow);
  int *quiet_many = keep (new (std::nothrow) int[4]); // nothrow new[]
  operator delete[] (quiet_many, std::nothrow);
  int *none = keep (new (std::nothrow) int[1000]); // too big: the pool throws
  std::printf ("nothrow new[] of too much: %s\n", none ? "memory" : "null");
  try
    {
      int *too_many = keep (new int[1000]);
      std::printf ("new[] of too much: memory %p\n", (void *) too_many);
    }
  catch (const std::bad_alloc &)
    {
      std::printf ("new[] of too much: bad_alloc\n");
    }

  aligned_widget *aligned = make_aligned (); // aligned new, sized delete
  sum += aligned->values[0];
  delete aligned;
  aligned_widget *aligned_many = keep (new aligned_widget[1]); // aligned new[]
  delete[] aligned_many;
  aligned_widget *aligned_quiet = keep (new (std::nothrow) aligned_widget);
  delete aligned_quiet;
  aligned_widget *aligned_quiet_many
      = keep (new (std::nothrow) aligned_widget[1]);
  delete[] aligned_quiet_many;

  std::printf ("sum %d; new %d, delete %d, aligned new %d, aligned delete "
               "%d\n",
               sum, news, deletes, aligned_news, aligned_deletes);
  return sum == 14 ? 0 : 1;
}
