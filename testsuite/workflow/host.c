/* A host that makes no malloc call itself and dlopens the library named
   by its first argument (as a plugin host does).  With a second argument
   "dlclose", it keeps a block the library made (leaked) and dlcloses the
   library before exit: the library's frames must still symbolize.  */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

int
main (int argc, char **argv)
{
  void *library = dlopen (argc > 1 ? argv[1] : "", RTLD_NOW);
  if (library == NULL)
    {
      fprintf (stderr, "host: %s\n", dlerror ());
      return 1;
    }
  if (argc > 2 && strcmp (argv[2], "dlclose") == 0)
    {
      char *(*make) (int) = (char *(*) (int) ) dlsym (library, "plugin_make");
      char *kept = make (100);
      printf ("byte: %d\n", kept[3]);
      dlclose (library);
      return 0;
    }
  int (*run) (void) = (int (*) (void)) dlsym (library, "plugin_run");
  printf ("plugin_run: %d\n", run ());
  return 0;
}
