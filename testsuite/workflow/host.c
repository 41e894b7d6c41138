/* A host that makes no malloc call itself and dlopens the library named
   by its argument (as a plugin host does).  */
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
  int (*run) (void) = (int (*) (void)) dlsym (library, "plugin_run");
  printf ("plugin_run: %d\n", run ());
  return 0;
}
