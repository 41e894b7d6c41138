/* A library, built -fPIC -fno-semantic-interposition with the plugin,
   that defines memcmp and strlen and calls them (own_memcmp.c dlopens
   it): GCC calls its own through their local aliases.  */
#include <string.h>

static int own_calls;

__attribute__ ((noinline)) int
memcmp (const void *a, const void *b, size_t n)
{
  const unsigned char *x = a, *y = b;
  own_calls++;
  for (size_t i = 0; i < n; i++)
    if (x[i] != y[i])
      return x[i] < y[i] ? -5 : 5;
  return 0;
}

__attribute__ ((noinline)) size_t
strlen (const char *text)
{
  size_t n = 0;
  own_calls += 100;
  while (text[n] != '\0')
    n++;
  return n;
}

__attribute__ ((noipa)) int
library_compare (const char *a, const char *b, size_t n)
{
  return memcmp (a, b, n);
}

__attribute__ ((noipa)) size_t
library_length (const char *text)
{
  return strlen (text);
}

int
library_calls (void)
{
  return own_calls;
}
