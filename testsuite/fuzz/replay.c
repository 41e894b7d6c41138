/* A main () for the fuzz targets without libFuzzer: calls
   LLVMFuzzerTestOneInput once for every file named on the command line
   and every file in the directories named (not recursively), so that
   `make check-fuzz' replays the seed corpora and the regressions with
   GCC's sanitizers.  Each input's name goes to stderr before it runs, so
   that a crash report follows the name of the input that made it.

   usage: replay_TARGET FILE|DIRECTORY...  */

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static int
compare_names (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* Run the target on the file at PATH; false when it cannot be read.  */
static int
replay_file (const char *path)
{
  FILE *file = fopen (path, "rb");
  if (file == NULL)
    {
      fprintf (stderr, "replay: cannot open %s: %s\n", path, strerror (errno));
      return 0;
    }
  uint8_t *data = NULL;
  size_t size = 0, capacity = 0, got;
  do
    {
      if (size == capacity)
        {
          capacity = capacity ? capacity * 2 : 4096;
          data = realloc (data, capacity);
          if (data == NULL)
            {
              fprintf (stderr, "replay: out of memory reading %s\n", path);
              exit (1);
            }
        }
      got = fread (data + size, 1, capacity - size, file);
      size += got;
    }
  while (got > 0);
  int ok = !ferror (file);
  fclose (file);
  if (!ok)
    {
      fprintf (stderr, "replay: cannot read %s\n", path);
      free (data);
      return 0;
    }
  /* Exactly SIZE bytes, as libFuzzer gives them: a read past the end is
     caught.  */
  uint8_t *input = malloc (size ? size : 1);
  memcpy (input, data, size);
  free (data);
  fprintf (stderr, "replay: %s (%zu bytes)\n", path, size);
  LLVMFuzzerTestOneInput (input, size);
  free (input);
  return 1;
}

/* Run the target on every regular file in DIRECTORY, in name order.
   Returns how many ran, or -1 when one could not be read.  */
static long
replay_directory (const char *directory)
{
  DIR *dir = opendir (directory);
  if (dir == NULL)
    {
      fprintf (stderr, "replay: cannot open %s: %s\n", directory,
               strerror (errno));
      return -1;
    }
  char **names = NULL;
  size_t count = 0, capacity = 0;
  struct dirent *entry;
  while ((entry = readdir (dir)) != NULL)
    {
      if (entry->d_name[0] == '.')
        continue;
      if (count == capacity)
        {
          capacity = capacity ? capacity * 2 : 64;
          names = realloc (names, capacity * sizeof *names);
          if (names == NULL)
            exit (1);
        }
      size_t length = strlen (directory) + strlen (entry->d_name) + 2;
      names[count] = malloc (length);
      if (names[count] == NULL)
        exit (1);
      snprintf (names[count++], length, "%s/%s", directory, entry->d_name);
    }
  closedir (dir);
  if (count > 0)
    qsort (names, count, sizeof *names, compare_names);
  long ran = 0;
  for (size_t i = 0; i < count; i++)
    {
      struct stat info;
      if (stat (names[i], &info) == 0 && S_ISREG (info.st_mode))
        {
          if (!replay_file (names[i]))
            ran = -1;
          else if (ran >= 0)
            ran++;
        }
      free (names[i]);
    }
  free (names);
  return ran;
}

int
main (int argc, char **argv)
{
  long inputs = 0;
  int bad = 0;
  if (argc < 2)
    {
      fprintf (stderr, "usage: %s FILE|DIRECTORY...\n", argv[0]);
      return 2;
    }
  for (int i = 1; i < argc; i++)
    {
      struct stat info;
      if (stat (argv[i], &info) != 0)
        {
          /* A target may have no regressions yet.  */
          if (errno == ENOENT)
            continue;
          fprintf (stderr, "replay: %s: %s\n", argv[i], strerror (errno));
          bad = 1;
        }
      else if (S_ISDIR (info.st_mode))
        {
          long ran = replay_directory (argv[i]);
          if (ran < 0)
            bad = 1;
          else
            inputs += ran;
        }
      else if (replay_file (argv[i]))
        inputs++;
      else
        bad = 1;
    }
  printf ("%ld inputs replayed\n", inputs);
  return bad;
}
