/* Real code from Debian's gcc-12-source: libiberty's C++ demangler
   (cp-demangle.c), the recursive-descent parser behind c++filt, gdb and
   GCC's own diagnostics.  Demangles generated names of nested templates
   (recursion as deep as the nesting) with cplus_demangle_v3, which grows
   each result with realloc; keeps a window of results live, as a
   symbolizer's cache does, and frees the rest.  bench/run.py extracts
   libiberty's sources and builds them with this driver.  Argument: scale
   (default 1).  */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"

#define WINDOW 4096
#define NAME_MAX_BYTES 4096

static const char *const leaves[]
    = { "i", "c", "d", "l", "b", "f", "m", "3Foo", "6Widget", "Pv" };
static const char *const templates[]
    = { "4List", "3Map", "6Vector", "4Pair", "8Optional", "5Tuple" };
static const char *const methods[]
    = { "5visit", "4find", "6insert", "5clear", "7resolve" };

static unsigned long random_state = 12345;

static unsigned
next_random (unsigned bound)
{
  random_state = random_state * 6364136223846793005UL + 1442695040888963407UL;
  return (unsigned) ((random_state >> 33) % bound);
}

/* Append a mangled type of nesting DEPTH at most to OUT; with CLASS, a
   class template (a nested name's part cannot be a builtin type).  */
static void
append_type (char *out, size_t *length, int depth, int class)
{
  if (!class && (depth == 0 || next_random (4) == 0))
    {
      const char *leaf = leaves[next_random (sizeof leaves / sizeof *leaves)];
      memcpy (out + *length, leaf, strlen (leaf));
      *length += strlen (leaf);
      return;
    }
  const char *name
      = templates[next_random (sizeof templates / sizeof *templates)];
  memcpy (out + *length, name, strlen (name));
  *length += strlen (name);
  out[(*length)++] = 'I';
  for (unsigned n = 1 + next_random (2); n > 0; n--)
    append_type (out, length, depth - 1, 0);
  out[(*length)++] = 'E';
}

/* A mangled member function of a templated class: its template
   arguments and parameters nested up to DEPTH.  */
static void
make_name (char *out, int depth)
{
  size_t length = 0;
  memcpy (out, "_ZN2ns", 6);
  length = 6;
  append_type (out, &length, depth, 1);
  const char *method = methods[next_random (sizeof methods / sizeof *methods)];
  memcpy (out + length, method, strlen (method));
  length += strlen (method);
  out[length++] = 'E';
  for (unsigned n = 1 + next_random (3); n > 0; n--)
    append_type (out, &length, depth, 0);
  out[length] = '\0';
}

int
main (int argc, char **argv)
{
  double scale = argc > 1 ? atof (argv[1]) : 1.0;
  long names = (long) (200000 * scale);
  static char *window[WINDOW];
  char mangled[NAME_MAX_BYTES];
  unsigned long checksum = 0;
  long failed = 0;

  for (long i = 0; i < names; i++)
    {
      make_name (mangled, 2 + (int) (i % 5));
      char *demangled = cplus_demangle_v3 (mangled, DMGL_PARAMS | DMGL_ANSI);
      if (demangled == NULL)
        {
          failed++;
          continue;
        }
      checksum
          = checksum * 31 + strlen (demangled) + (unsigned char) demangled[7];
      free (window[i % WINDOW]);
      window[i % WINDOW] = demangled;
    }
  for (long i = 0; i < WINDOW; i++)
    free (window[i]);
  printf ("libiberty_demangle %lu %ld\n", checksum, failed);
  return failed != 0;
}
