/* A library dlclose'd, and another dlopen'ed where it was: the runtime
   must not take the second for the first (its interceptors' list of
   instrumented modules, their per-thread verdict cache, the stack facts
   learnt per return address, the profile's segment table).

   Two scenarios, the first argument:
   - "plain-after-counted": libreuse_counted.so (built with the plugin)
     is opened, used and closed, then libreuse_plain.so (without it):
     the plain library's memcpy must be counted by the interceptor, not
     skipped as an instrumented module's;
   - "counted-after-plain": libreuse_plain.so is opened and examined (an
     instrumented library, libreuse_helper.so, is opened meanwhile: its
     constructor makes the runtime look at the loaded modules), used and
     closed, then libreuse_counted.so: its memcpy must be counted once
     (by the plugin), not again by the interceptor;
   - "dependency": as plain-after-counted, but libreuse_counted.so is
     loaded as a dependency of libreuse_front.so (which the program opens
     and closes): it goes with it, and the profile must still name it;
   - "many": see MANY_ROUNDS below.
   Each library's work runs ROUNDS times from its own function here
   (first_library, second_library), so the profile has one context per
   library.  Prints whether the second library was mapped where the first
   had been ("same address" or "moved").  */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUNDS 10

typedef char *work_function (const char *, size_t);

/* 63 characters and the NUL: one 64-byte block, 8 granules of 8 bytes.  */
static const char text[64]
    = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde";

static void *
open_library (const char *name)
{
  void *library = dlopen (name, RTLD_NOW | RTLD_LOCAL);
  if (library == NULL)
    {
      fprintf (stderr, "dlclose_reuse: %s\n", dlerror ());
      exit (2);
    }
  return library;
}

/* The load address of the module that defines the function NAME.  */
static void *
load_address (void *library, const char *name)
{
  Dl_info where;
  if (dladdr (dlsym (library, name), &where) == 0)
    exit (3);
  return where.dli_fbase;
}

/* ROUNDS blocks made by LIBRARY's function NAME, checked and freed.  */
static void
run_work (void *library, const char *name)
{
  work_function *work = (work_function *) dlsym (library, name);
  if (work == NULL)
    exit (4);
  for (int round = 0; round < ROUNDS; round++)
    {
      char *block = work (text, sizeof text);
      if (block[10] != 'a')
        exit (5);
      free (block);
    }
}

__attribute__ ((noinline)) static void
first_library (void *library, const char *name)
{
  run_work (library, name);
}

__attribute__ ((noinline)) static void
second_library (void *library, const char *name)
{
  run_work (library, name);
}

/* "many": libreuse_counted.so opened, used and closed MANY_ROUNDS
   times; reserved, each load lands at a new address, and the profile
   must name every one (more segments than the runtime's first table of
   kept segments holds).  */
#define MANY_ROUNDS 300

int
main (int argc, char **argv)
{
  if (argc > 1 && strcmp (argv[1], "many") == 0)
    {
      for (int round = 0; round < MANY_ROUNDS; round++)
        {
          void *library = open_library ("./libreuse_counted.so");
          first_library (library, "counted_work");
          dlclose (library);
        }
      puts ("moved");
      return 0;
    }
  bool plain_first = argc > 1 && strcmp (argv[1], "counted-after-plain") == 0;
  bool dependency = argc > 1 && strcmp (argv[1], "dependency") == 0;
  const char *first_work = plain_first ? "plain_work" : "counted_work";
  const char *second_work = plain_first ? "counted_work" : "plain_work";
  void *helper = NULL;
  void *first = open_library (plain_first  ? "./libreuse_plain.so"
                              : dependency ? "./libreuse_front.so"
                                           : "./libreuse_counted.so");
  if (plain_first)
    helper = open_library ("./libreuse_helper.so");
  void *first_address = load_address (first, first_work);
  first_library (first, first_work);
  dlclose (first);

  void *second = open_library (plain_first ? "./libreuse_counted.so"
                                           : "./libreuse_plain.so");
  void *second_address = load_address (second, second_work);
  second_library (second, second_work);
  dlclose (second);
  if (helper != NULL)
    dlclose (helper);
  puts (first_address == second_address ? "same address" : "moved");
  return 0;
}
