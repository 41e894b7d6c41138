/* Built without the plugin into a shared library: its memcpy calls are
   counted by the runtime's interceptor, not by instrumented code.  */
#include <stddef.h>
#include <string.h>

void
plain_copy (void *to, const void *from, size_t size)
{
  memcpy (to, from, size);
}
