/* The program of docs/manual.md's LLVM block: an allocation through a
   wrapper, touched, freed; one leaked.  */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__ ((noipa)) void *
xmalloc (size_t n)
{
  void *p = malloc (n);
  if (p == NULL)
    abort ();
  return p;
}

#ifdef OTHER_TEXT
/* The link check's second executable segment.  */
__attribute__ ((section (".othertext")))
#endif
__attribute__ ((noipa)) char *
make_buffer (size_t n)
{
  return xmalloc (n);
}

int
main (void)
{
  char *buffer = make_buffer (256);
  memset (buffer, 'a', 255);
  buffer[255] = '\0';
  printf ("%zu\n", strlen (buffer));
  free (buffer);
  return 0;
}
