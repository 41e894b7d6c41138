/* The allocator of the context hints test (context_hints.py): one
   malloc call in a function reached only through a pointer, as an
   interpreter's allocator is.  Its callers are in context_main.c.  */

#include <stdlib.h>

static void *
wrapper (size_t size)
{
  void *block = malloc (size);
  if (block == NULL)
    abort ();
  return block;
}

void *(*allocate) (size_t) = wrapper;
