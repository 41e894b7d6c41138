/* Built without the plugin into libreuse_front.so, linked against
   libreuse_counted.so (dlclose_reuse.c's "dependency" scenario): opening
   it loads libreuse_counted.so, closing it unloads both.  */
#include <stddef.h>

char *counted_work (const char *text, size_t size);

char *
front_work (const char *text, size_t size)
{
  return counted_work (text, size);
}
