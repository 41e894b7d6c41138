/* dl_iterate_phdr, interposed to count the threads inside it, for the
   fork child (libmemprof.so only, as interceptors.c: a static program
   keeps the C library's own).

   dl_iterate_phdr holds the loader's write lock while its callback runs
   (a C++ throw holds it in _Unwind_Find_FDE; libunwind in its step).  A
   thread of the parent that is inside it when another forks does not
   exist in the child, and glibc 2.36 does not reset that lock in the
   child: there, every later dl_iterate_phdr waits for ever.  Without the
   runtime, a child that only allocates and exits never calls it; with
   it, the child's stack capture (libunwind) and its profile at exit
   (the segment list) would.  So the count of threads inside
   dl_iterate_phdr, read by the child's fork handler (control.c), tells
   whether the child may walk the loaded objects at all
   (runtime_loader_lost).  A thread counted just before it takes the
   lock or just after it released it makes the child give up what it did
   not have to: never the other way.  */

#define _GNU_SOURCE
#include "internal.h"

#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>

typedef int (*phdr_callback) (struct dl_phdr_info *, size_t, void *);
typedef int (*dl_iterate_phdr_function) (phdr_callback, void *);

static _Atomic int walkers;
static _Atomic (dl_iterate_phdr_function) real_dl_iterate_phdr;

static dl_iterate_phdr_function
real_function (void)
{
  dl_iterate_phdr_function real = atomic_load (&real_dl_iterate_phdr);
  if (real == NULL)
    {
      real = (dl_iterate_phdr_function) dlsym (RTLD_NEXT, "dl_iterate_phdr");
      atomic_store (&real_dl_iterate_phdr, real);
    }
  return real;
}

MEMPROF_EXPORT int
dl_iterate_phdr (phdr_callback callback, void *data)
{
  dl_iterate_phdr_function real = real_function ();
  int result;

  if (real == NULL)
    return 0;
  atomic_fetch_add (&walkers, 1);
  result = real (callback, data);
  atomic_fetch_sub (&walkers, 1);
  return result;
}

/* See internal.h.  */
bool
loader_walk_in_progress (void)
{
  return atomic_load (&walkers) > 0;
}

/* Look the C library's function up before the program starts threads.  */
__attribute__ ((constructor)) static void
loader_walk_constructor (void)
{
  real_function ();
}
