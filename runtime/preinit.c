/* Linked only into libmemprof.a: start the runtime from .preinit_array,
   before any constructor of the program or of its shared libraries, so
   that the shadow base is set before any instrumented code can run.
   (Shared objects may not have .preinit_array; libmemprof.so starts from
   its constructor, which runs before the program's.)

   The array's entry is an IFUNC: its IRELATIVE relocation reserves the
   shadow while the program is relocated, before the program's own IFUNC
   resolvers run, which may be instrumented.  The linker sorts the
   program's IRELATIVE relocations of .rela.dyn by address, and
   .preinit_array lies before every other section a pointer can be in
   (.init_array, .data.rel.ro, .got, .data); those of .rela.plt (IFUNCs
   called through the PLT) come after .rela.dyn.  */

#include "internal.h"

static void
start_before_constructors (void)
{
  runtime_ensure_initialized ();
}

__attribute__ ((no_stack_protector,
                used)) static void (*reserve_shadow_and_start (void)) (void)
{
  shadow_reserve_by_syscalls ();
  return start_before_constructors;
}

static void start_early (void)
    __attribute__ ((ifunc ("reserve_shadow_and_start")));

__attribute__ ((section (".preinit_array"),
                used)) static void (*const memprof_preinit) (void)
    = start_early;
