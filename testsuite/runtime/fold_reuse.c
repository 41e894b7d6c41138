/* Two libraries with the same code at the same return addresses but in
   different functions (fold_reuse_lib.S), dlopen'ed, used and dlclose'd
   in turns: with reserve_unloaded_modules=0 each maps where the other
   was.  The fold of recursion depends on which function each return
   address is in, so a fold memo step learnt with one library must not
   serve the other (verify_contexts=1 reports every context that is not
   a full unwind's).  Prints how many times a library was mapped where
   the last one had been.  */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#define ROUNDS 6
#define CALLS 100

int
main (void)
{
  void *last = NULL;
  int same = 0;
  for (int round = 0; round < ROUNDS; round++)
    {
      void *library
          = dlopen (round & 1 ? "./libfold_b.so" : "./libfold_a.so", RTLD_NOW);
      if (library == NULL)
        {
          fprintf (stderr, "%s\n", dlerror ());
          return 1;
        }
      void *(*work) (void) = (void *(*) (void) ) dlsym (library, "work");
      Dl_info info;
      if (work == NULL || !dladdr ((void *) work, &info))
        return 1;
      same += info.dli_fbase == last;
      last = info.dli_fbase;
      for (int i = 0; i < CALLS; i++)
        {
          char *volatile block = work ();
          block[0] = 1;
          free (block);
        }
      dlclose (library);
    }
  printf ("same address %d\n", same);
  return 0;
}
