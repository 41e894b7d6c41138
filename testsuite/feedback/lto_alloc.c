/* The allocation wrapper of the LTO cloning test (lto_clone.py): one
   malloc call in a function kept out of line, in a unit of its own; its
   callers are in lto_main.c, directly and through a function pointer.  */

#include <stdlib.h>

__attribute__ ((noinline)) void *
new_block (size_t size)
{
  void *block = malloc (size);
  if (block == NULL)
    abort ();
  return block;
}
