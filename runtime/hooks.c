/* Malloc and free hooks, as the sanitizers' runtimes offer them
   (sanitizer/allocator_interface.h): a program installs up to
   HOOKS_MAX pairs with __sanitizer_install_malloc_and_free_hooks, or
   defines __sanitizer_malloc_hook and __sanitizer_free_hook, and is told
   of every allocation the program makes (after it, with its pointer and
   requested size) and of every free of a non-null pointer (before it).
   As in LLVM, installing returns the pair's slot number (from 1), or 0
   when a hook is null or the slots are full; the hooks defined by name
   take no slot.
   realloc counts as an allocation and a free; C++ new and delete are
   allocations and frees.  The runtime's own allocations are not shown.

   A hook runs in the allocating thread; an allocation the hook makes
   itself is profiled but not shown to the hooks again (no recursion).
   Hooks are installed for good: there is no removal, as in LLVM.  */

#include "internal.h"

#define HOOKS_MAX 5

typedef void (*malloc_hook_fn) (const volatile void *pointer, size_t size);
typedef void (*free_hook_fn) (const volatile void *pointer);

/* The hooks a program defines under these names; weak references, null
   when the program has none.  */
extern void __sanitizer_malloc_hook (const volatile void *pointer, size_t size)
    __attribute__ ((weak, visibility ("default")));
extern void __sanitizer_free_hook (const volatile void *pointer)
    __attribute__ ((weak, visibility ("default")));

/* Slot 0 holds the hooks defined by name, 1 to HOOKS_MAX the installed
   ones.  */
static struct
{
  _Atomic (malloc_hook_fn) on_malloc;
  _Atomic (free_hook_fn) on_free;
} hooks[HOOKS_MAX + 1];

/* Not 0 once any hook is set (read on every allocation).  */
_Atomic int hooks_count;
static _Atomic int hooks_claimed;
static __thread int in_hook __attribute__ ((tls_model ("initial-exec")));

static void
fill (int slot, malloc_hook_fn on_malloc, free_hook_fn on_free)
{
  atomic_store (&hooks[slot].on_malloc, on_malloc);
  atomic_store (&hooks[slot].on_free, on_free);
  atomic_fetch_add (&hooks_count, 1);
  allocator_observers_changed ();
}

MEMPROF_EXPORT int
__sanitizer_install_malloc_and_free_hooks (malloc_hook_fn on_malloc,
                                           free_hook_fn on_free)
{
  int slot;
  if (on_malloc == NULL || on_free == NULL)
    return 0;
  slot = atomic_fetch_add (&hooks_claimed, 1) + 1;
  if (slot > HOOKS_MAX)
    return 0;
  fill (slot, on_malloc, on_free);
  return slot;
}

void
hooks_start (void)
{
  if (__sanitizer_malloc_hook != NULL || __sanitizer_free_hook != NULL)
    fill (0, __sanitizer_malloc_hook, __sanitizer_free_hook);
}

/* A hook runs outside the section of the entry point that calls it (no
   lock of the runtime's is held then): its allocations are profiled as
   the program's, and a handler that interrupts it is served as
   anywhere else in the program.  */
static inline bool
leave_section (void)
{
  bool entered = runtime_entered;
  atomic_signal_fence (memory_order_seq_cst);
  runtime_entered = false;
  atomic_signal_fence (memory_order_seq_cst);
  return entered;
}

static inline void
back_to_section (bool entered)
{
  atomic_signal_fence (memory_order_seq_cst);
  runtime_entered = entered;
  atomic_signal_fence (memory_order_seq_cst);
}

void
hooks_run_malloc (const void *pointer, size_t size)
{
  if (in_hook || in_runtime)
    return;
  in_hook++;
  bool entered = leave_section ();
  for (int i = 0; i <= HOOKS_MAX; i++)
    {
      malloc_hook_fn hook = atomic_load (&hooks[i].on_malloc);
      if (hook != NULL)
        hook (pointer, size);
    }
  back_to_section (entered);
  in_hook--;
}

void
hooks_run_free (const void *pointer)
{
  if (in_hook || in_runtime)
    return;
  in_hook++;
  bool entered = leave_section ();
  for (int i = 0; i <= HOOKS_MAX; i++)
    {
      free_hook_fn hook = atomic_load (&hooks[i].on_free);
      if (hook != NULL)
        hook (pointer);
    }
  back_to_section (entered);
  in_hook--;
}
