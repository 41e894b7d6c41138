/* Built three times into shared libraries (dlclose_reuse.c): WORK is
   counted_work or helper_work with the plugin, plain_work without it.
   The three have the same segments, so that one dlopen'ed after another
   was dlclose'd maps where it was.  WORK's block is allocated here (the
   context's first frame names WORK) and touched twice: a memcpy of SIZE
   bytes (counted by the plugin in an instrumented library, by the
   runtime's interceptor in the plain one) and a strlen over the same
   bytes (counted by the interceptor in both).  */
#include <stdlib.h>
#include <string.h>

__attribute__ ((noinline)) char *
WORK (const char *text, size_t size)
{
  char *block = malloc (size);
  memcpy (block, text, size);
  if (strlen (block) + 1 != size)
    abort ();
  return block;
}
