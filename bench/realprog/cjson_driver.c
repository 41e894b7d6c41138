/* The workload for bench/stack_real_program.py: builds a JSON text of
   nested objects, arrays, strings and numbers, then parses it with cJSON
   and prints it back ROUNDS times.  cJSON's parser is a recursive descent
   that threads a `parse_buffer *' (a local of cJSON_ParseWithOpts) through
   every static helper, its printer a `printbuffer *'.  Prints a checksum
   so that every build can be checked to behave the same.  */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cJSON.h"

/* Append one record: an object with a string, numbers, a nested array.  */
static size_t
put_record (char *text, size_t at, int i)
{
  return at
         + (size_t) sprintf (text + at,
                             "%s{\"name\": \"record %d\", \"id\": %d, "
                             "\"score\": %d.%02d, \"ok\": %s, \"tags\": "
                             "[\"a%d\", \"b\", [1, 2, [%d, -%d]]], "
                             "\"nested\": {\"x\": %d, \"y\": [true, null]}}",
                             i ? ", " : "", i, i, i % 100, i % 97,
                             i % 2 ? "true" : "false", i % 7, i, i, i * 3);
}

int
main (int argc, char **argv)
{
  int records = argc > 1 ? atoi (argv[1]) : 2000;
  int rounds = argc > 2 ? atoi (argv[2]) : 50;
  char *text = malloc ((size_t) records * 256 + 16);
  size_t at = 0;
  unsigned long checksum = 0;

  if (text == NULL || records <= 0 || rounds <= 0)
    {
      fprintf (stderr, "usage: cjson_driver [RECORDS [ROUNDS]]\n");
      return 2;
    }
  text[at++] = '[';
  for (int i = 0; i < records; i++)
    at = put_record (text, at, i);
  text[at++] = ']';
  text[at] = '\0';

  for (int round = 0; round < rounds; round++)
    {
      cJSON *document = cJSON_Parse (text);
      if (document == NULL)
        {
          fprintf (stderr, "cjson_driver: parse error near %.20s\n",
                   cJSON_GetErrorPtr ());
          return 1;
        }
      char *printed = cJSON_PrintUnformatted (document);
      checksum = checksum * 31 + strlen (printed);
      checksum += (unsigned long) cJSON_GetArraySize (document);
      free (printed);
      cJSON_Delete (document);
    }
  printf ("%lu\n", checksum);
  free (text);
  return 0;
}
