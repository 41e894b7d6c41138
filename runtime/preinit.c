/* Linked only into libmemprof.a (joined to runtime.o): reserve the shadow
   before any instrumented code of the program can run.  The program's
   IFUNC resolvers, which may be instrumented, run while the program is
   relocated, before .preinit_array and any constructor; so the entry
   below is an IFUNC itself, whose IRELATIVE relocation reserves the
   shadow.  The linker sorts the program's IRELATIVE relocations of
   .rela.dyn by address, and .preinit_array lies before every other
   section a pointer can be in (.init_array, .data.rel.ro, .got, .data);
   those of .rela.plt (IFUNCs called through the PLT) are applied after
   .rela.dyn.  The runtime does not start here but at the first
   allocation or at the first constructor, as with libmemprof.so; when
   that is before the C library has set environ (the program's own
   .preinit_array functions run before its initialiser), runtime.c reads
   MEMPROF_OPTIONS from the initial stack.  */

#include "internal.h"

static void
shadow_already_reserved (void)
{
}

__attribute__ ((no_stack_protector,
                used)) static void (*reserve_shadow (void)) (void)
{
  shadow_reserve_by_syscalls ();
  return shadow_already_reserved;
}

static void reserve_shadow_early (void)
    __attribute__ ((ifunc ("reserve_shadow")));

__attribute__ ((section (".preinit_array"),
                used)) static void (*const memprof_preinit) (void)
    = reserve_shadow_early;
