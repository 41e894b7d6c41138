/* own_memcmp_lib.c dlopen'ed with RTLD_LOCAL: its memcmp and strlen
   calls reach its own functions (the C library's memcmp would answer -1,
   and nothing would be counted in library_calls), as without the
   plugin.  */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
main (void)
{
  void *library = dlopen ("./libown_memcmp.so", RTLD_NOW | RTLD_LOCAL);
  if (library == NULL)
    {
      printf ("%s\n", dlerror ());
      return 1;
    }
  int (*compare) (const char *, const char *, size_t) = (int (*) (
      const char *, const char *, size_t)) dlsym (library, "library_compare");
  size_t (*length) (const char *)
      = (size_t (*) (const char *)) dlsym (library, "library_length");
  int (*calls) (void) = (int (*) (void)) dlsym (library, "library_calls");
  char *a = malloc (16), *b = malloc (16);
  memset (a, 'a', 16);
  memset (b, 'a', 16);
  b[9] = 'b';
  a[15] = '\0';
  int result = compare (a, b, 16);
  size_t size = length (a);
  printf ("%d %zu %d\n", result, size, calls ());
  free (b);
  free (a);
  return 0;
}
