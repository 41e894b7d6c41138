/* String processing: lines are generated, split into words, words are
   duplicated, counted in a sorted array, joined back with a growing
   buffer.  Argument: scale (default 1).  */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const vocabulary[]
    = { "memory", "profile", "allocation", "heap",     "stack",   "granule",
        "shadow", "counter", "context",    "lifetime", "density", "cold",
        "hot",    "sample",  "compiler",   "runtime" };

static int
compare (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

int
main (int argc, char **argv)
{
  double scale = argc > 1 ? atof (argv[1]) : 1.0;
  unsigned long state = 7, checksum = 0;
  for (long line = 0; line < (long) (300000 * scale); line++)
    {
      char text[512] = "";
      size_t used = 0;
      for (int w = 0; w < 24; w++)
        {
          state = state * 6364136223846793005UL + 1442695040888963407UL;
          used += snprintf (text + used, sizeof text - used, "%s ",
                            vocabulary[(state >> 33) % 16]);
        }
      char **words = malloc (32 * sizeof *words);
      int count = 0;
      for (char *save, *word = strtok_r (text, " ", &save); word && count < 32;
           word = strtok_r (NULL, " ", &save))
        words[count++] = strdup (word);
      qsort (words, count, sizeof *words, compare);
      size_t capacity = 16, length = 0;
      char *joined = malloc (capacity);
      joined[0] = '\0';
      for (int i = 0; i < count; i++)
        {
          size_t add = strlen (words[i]) + 1;
          while (length + add + 1 > capacity)
            joined = realloc (joined, capacity *= 2);
          memcpy (joined + length, words[i], add - 1);
          length += add;
          joined[length - 1] = ',';
          joined[length] = '\0';
          free (words[i]);
        }
      checksum += length + (unsigned char) joined[0];
      free (joined);
      free (words);
    }
  printf ("strings %lu\n", checksum);
  return 0;
}
