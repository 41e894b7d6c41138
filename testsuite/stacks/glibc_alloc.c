/* Allocations made inside the C library, whose functions have no frame
   pointers (strdup, asprintf, getline on an fmemopen stream), at every
   depth of a recursion: the frame-pointer chain skips the caller of each
   of them, so unwinder=fast must step over the library's frame by its
   rule and go on by frame pointers.  Argument: the recursion depth
   (default 40).  Prints the blocks the program allocated and a checksum
   of what they hold.  */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long blocks, checksum;

static void
keep (char *text)
{
  for (const char *c = text; *c; c++)
    checksum = checksum * 31 + (unsigned char) *c;
  free (text);
}

static void descend_odd (int depth);

static void
descend (int depth)
{
  char name[32];
  snprintf (name, sizeof name, "level-%d", depth);
  keep (strdup (name));
  blocks++;
  char *line = NULL;
  if (asprintf (&line, "%s at %d", name, depth * 7) >= 0)
    {
      keep (line);
      blocks++;
    }
  if (depth > 0)
    {
      if (depth % 3 == 0)
        descend_odd (depth - 1);
      else
        descend (depth - 1);
    }
}

static void
descend_odd (int depth)
{
  char text[] = "first line\nsecond line\n";
  FILE *stream = fmemopen (text, sizeof text - 1, "r");
  if (stream != NULL)
    {
      char *line = NULL;
      size_t size = 0;
      if (getline (&line, &size, stream) > 0)
        {
          keep (line);
          blocks++;
        }
      else
        free (line);
      fclose (stream);
    }
  descend (depth);
}

int
main (int argc, char **argv)
{
  int depth = argc > 1 ? atoi (argv[1]) : 40;
  for (int round = 0; round < 20; round++)
    descend (depth);
  printf ("blocks %lu checksum %lu\n", blocks, checksum);
  return 0;
}
