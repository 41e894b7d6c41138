/* For test_noise.py: heap bytes read and written by the C library's
   str* and mem* functions, with known counts (one count per 8 bytes of a
   range, as __memprof_range_access counts):
   - string_site: 101 bytes stored by instrumented code (101 counts), then
     strlen reads them, NUL included: 13 counts more when intercepted, and
     the four comparisons with its copy read 71 bytes each: 4 x 9 more;
   - its copy (strdup, in main): 1 store, the four comparisons (4 x 9) and
     strnlen's 50 bytes (7): 44 when intercepted, 1 when not;
   - copy_site: 4096 bytes written by memcpy called from instrumented code:
     512 counts, by the plugin's range call only, never twice.
   It prints what the comparisons return, which must be what the C
   library returns without the runtime.  */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char source[4096];

__attribute__ ((noipa)) static char *
string_site (void)
{
  return malloc (128);
}

__attribute__ ((noipa)) static char *
copy_site (size_t size)
{
  return malloc (size);
}

int
main (int argc, char **argv)
{
  (void) argv;
  char *text = string_site ();
  for (int i = 0; i < 100; i++)
    text[i] = 'a';
  text[100] = '\0';
  size_t length = strlen (text);
  char *other = strdup (text);
  other[70] = 'b';
  printf ("%d %d %d %d %zu\n", memcmp (text, other, 100),
          memcmp (other, text, 80), strcmp (text, other),
          strncmp (other, text, 90), strnlen (other, 50));
  free (other);
  free (text);

  size_t size = 4095 + (size_t) argc; /* not a constant: a real call */
  char *copy = copy_site (size);
  memcpy (copy, source, size);
  free (copy);
  return length == 100 ? 0 : 1;
}
