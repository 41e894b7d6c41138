/* The program test_functions_flamegraph.py profiles, built with
   gcc -g -O0 -fno-optimize-sibling-calls and the plugin.  Every
   allocation site, its size, its count and whether it is touched or
   freed is known:

     f         3 x 100 bytes a call, touched, kept (live at exit)
     g         calls f twice, from two call sites; then 1000 bytes once,
               touched, freed
     h         2 x 250 bytes, never touched, freed
     recurse   3 calls deep; 64 bytes at the bottom, never touched, kept
     copy      strdup of a 31-character string: 32 bytes allocated inside
               the C library (no debug information there), freed
     ns::make  48 bytes, touched, freed; its linkage name is the C++ one,
               _ZN2ns4makeEv, so that it demangles

   main calls g, h, recurse, copy and ns::make.  The test finds the line
   of each call by the "line:" comments.  */

#include <stdlib.h>
#include <string.h>

static void *kept[16];
static int kept_count;
static char text[32] = "0123456789012345678901234567890";

__attribute__ ((noinline)) void
f (void)
{
  for (int i = 0; i < 3; i++)
    {
      char *p = malloc (100); /* line:f */
      memset (p, 1, 100);
      kept[kept_count++] = p;
    }
}

__attribute__ ((noinline)) void
g (void)
{
  f ();                    /* line:g-f-1 */
  f ();                    /* line:g-f-2 */
  char *p = malloc (1000); /* line:g */
  memset (p, 2, 1000);
  free (p);
}

__attribute__ ((noinline)) void
h (void)
{
  void *a = malloc (250); /* line:h */
  void *b = malloc (250); /* line:h-2 */
  free (a);
  free (b);
}

__attribute__ ((noinline)) void
recurse (int depth)
{
  if (depth == 0)
    {
      kept[kept_count++] = malloc (64); /* line:recurse */
      return;
    }
  recurse (depth - 1); /* line:recurse-recurse */
}

__attribute__ ((noinline)) void
copy (void)
{
  char *p = strdup (text); /* line:copy */
  free (p);
}

void *make (void) __asm__("_ZN2ns4makeEv");

__attribute__ ((noinline)) void *
make (void)
{
  char *p = malloc (48); /* line:make */
  memset (p, 3, 48);
  return p;
}

int
main (void)
{
  g ();           /* line:main-g */
  h ();           /* line:main-h */
  recurse (2);    /* line:main-recurse */
  copy ();        /* line:main-copy */
  free (make ()); /* line:main-make */
  return 0;
}
