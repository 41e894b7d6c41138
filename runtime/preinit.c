/* Linked only into libmemprof.a: start the runtime from .preinit_array,
   before any constructor of the program or of its shared libraries, so
   that the shadow base is set before any instrumented code can run.
   (Shared objects may not have .preinit_array; libmemprof.so starts from
   its constructor, which runs before the program's.)  */

#include "internal.h"

static void
start_before_constructors (void)
{
  runtime_ensure_initialized ();
}

__attribute__ ((section (".preinit_array"),
                used)) static void (*const memprof_preinit) (void)
    = start_before_constructors;
