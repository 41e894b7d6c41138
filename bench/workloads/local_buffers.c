/* A workload that works in local buffers through pointers, as parsers and
   numeric kernels do: it tokenizes lines copied into a stack buffer by
   walking a pointer over them, and multiplies small matrices kept on the
   stack through row pointers.  Results go into a heap array.  */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 8

static unsigned
count_tokens (const char *line)
{
  char buffer[256];
  unsigned tokens = 0;
  strncpy (buffer, line, sizeof buffer - 1);
  buffer[sizeof buffer - 1] = '\0';
  for (char *p = buffer; *p != '\0';)
    {
      while (*p == ' ')
        p++;
      if (*p == '\0')
        break;
      tokens++;
      while (*p != ' ' && *p != '\0')
        p++;
    }
  return tokens;
}

static double
multiply (int seed)
{
  double a[N][N], b[N][N], c[N][N];
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      {
        a[i][j] = (i + seed) % 7;
        b[i][j] = (j * seed) % 5;
      }
  for (int i = 0; i < N; i++)
    {
      double *row = c[i];
      for (int j = 0; j < N; j++)
        {
          double sum = 0;
          for (int k = 0; k < N; k++)
            sum += a[i][k] * b[k][j];
          row[j] = sum;
        }
    }
  double trace = 0;
  for (int i = 0; i < N; i++)
    trace += c[i][i];
  return trace;
}

int
main (void)
{
  static const char *lines[] = { "the quick brown fox", "  jumps over  the ",
                                 "lazy dog", "a b c d e f g h i j" };
  double *results = malloc (20000 * sizeof *results);
  double total = 0;
  for (int i = 0; i < 20000; i++)
    results[i] = count_tokens (lines[i % 4]) + multiply (i);
  for (int i = 0; i < 20000; i++)
    total += results[i];
  printf ("total %.0f\n", total);
  free (results);
  return 0;
}
