/* A host that dlopens an instrumented library, keeps a block it made
   (leaked), and dlcloses it before exit: the library's frames must still
   symbolize.  */
#include <dlfcn.h>
#include <stdio.h>

int
main (int argc, char **argv)
{
  void *library = dlopen (argc > 1 ? argv[1] : "", RTLD_NOW);
  if (library == NULL)
    {
      fprintf (stderr, "host: %s\n", dlerror ());
      return 1;
    }
  char *(*make) (int) = (char *(*) (int) ) dlsym (library, "plugin_make");
  char *kept = make (100);
  printf ("byte: %d\n", kept[3]);
  dlclose (library);
  return 0;
}
