/* An instrumented library whose IFUNC resolver calls instrumented code
   that loads through a pointer (before_start.c's shape), used by
   before_start_main.c.  */

int library_table[4] = { 1, 0, 0, 0 };
int *volatile library_table_pointer = library_table;

/* noipa: not taken for pure, each call reads.  */
__attribute__ ((noipa, visibility ("hidden"))) int
library_pick_hidden (int *p)
{
  return p[0];
}

int
library_pick (int *p)
{
  return library_pick_hidden (p);
}

static int
add_ten (int x)
{
  return x + 10;
}

static int
add_twenty (int x)
{
  return x + 20;
}

#ifdef RESOLVER_LOADS_ITSELF
/* Called by the resolver only.  */
__attribute__ ((noinline)) static int
resolver_pick (int *p)
{
  return p[1] == 0;
}
#endif

/* RESOLVER_LOADS_ITSELF: the resolver loads itself and calls a function
   only it calls, for a library linked without the runtime: the plugin
   leaves both uninstrumented.  Otherwise it calls an instrumented
   function, which needs the library to be linked with the runtime.  */
static void *
resolve_library_add (void)
{
#ifdef RESOLVER_LOADS_ITSELF
  return library_table_pointer[0] && resolver_pick (library_table_pointer)
             ? (void *) add_ten
             : (void *) add_twenty;
#else
  return library_pick_hidden (library_table_pointer) ? (void *) add_ten
                                                     : (void *) add_twenty;
#endif
}

/* Called through a pointer: its IRELATIVE relocation is applied while the
   library is relocated, whatever the binding.  */
static int library_add_local (int)
    __attribute__ ((ifunc ("resolve_library_add")));
int (*volatile library_add) (int) = library_add_local;
