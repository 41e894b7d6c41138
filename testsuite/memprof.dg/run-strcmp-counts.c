/* strcmp and strncmp called from instrumented code (the plugin's calls
   of __memprof_strcmp and __memprof_strncmp) count the bytes to the
   first difference or NUL, included, one count per 8 bytes, in both
   strings, as the interposed functions count them.  Two 64-byte heap
   blocks each hold 40 'x' and a NUL, the second with 'y' at byte 20:
   strcmp reads 21 bytes of each (3 counts), strncmp with a bound of 10
   reads 10 (2 counts), and strcmp of the first with itself reads 41
   (6 counts, twice: 12).  Beside them, each block's memset (8 counts)
   and the stores of the NUL and of 'y'.  */
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

__attribute__ ((noipa)) int
compare (const char *a, const char *b)
{
  return strcmp (a, b);
}

__attribute__ ((noipa)) int
compare_bounded (const char *a, const char *b, size_t n)
{
  return strncmp (a, b, n);
}

int
main (void)
{
  size_t n = sixty_four ();
  char *a = malloc (n), *b = malloc (n);
  memset (a, 'x', n);
  memset (b, 'x', n);
  a[40] = '\0';
  b[40] = '\0';
  b[20] = 'y';
  int first = compare (a, b);
  int second = compare_bounded (a, b, 10);
  int third = compare (a, a);
  printf ("%d %d %d\n", (first < 0), second, third);
  free (b);
  free (a);
  return 0;
}

/* a: 8 + 1 + 3 + 2 + 12 = 26; b: 8 + 1 + 1 + 3 + 2 = 15.  */
/* { dg-output "(?=.*size \\(ave/min/max\\) 64.00 / 64 / 64\[^\n\]*\n\[^\n\]*access_count \\(ave/min/max\\): 26.00 / 26 / 26\n)(?=.*size \\(ave/min/max\\) 64.00 / 64 / 64\[^\n\]*\n\[^\n\]*access_count \\(ave/min/max\\): 15.00 / 15 / 15\n)(?=.*1 0 0\n)" } */
