/* strlen called from instrumented code (the plugin's call of
   __memprof_strlen) counts the bytes to the NUL, included, one count
   per 8 bytes, as the interposed strlen counts them: a 30-character
   string in a 64-byte heap block, measured twice, gives 4 counts each
   time (31 bytes), beside the 8 of the block's memset and the store of
   its NUL.  */
/* { dg-do run } */
/* { dg-memprof-options "print_text=1:write_profile=0" } */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__ ((noipa)) size_t
sixty_four (void)
{
  return 64;
}

__attribute__ ((noipa)) size_t
measure (const char *text)
{
  return strlen (text);
}

int
main (void)
{
  size_t n = sixty_four ();
  char *text = malloc (n);
  memset (text, 'x', n);
  text[30] = '\0';
  size_t first = measure (text);
  size_t second = measure (text);
  printf ("%zu %zu\n", first, second);
  free (text);
  return 0;
}

/* { dg-output "(?=.*size \\(ave/min/max\\) 64.00 / 64 / 64\[^\n\]*\n\[^\n\]*access_count \\(ave/min/max\\): 17.00 / 17 / 17\n)(?=.*30 30\n)" } */
