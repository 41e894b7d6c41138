/* A unit of a shared library, built -fPIC -fno-semantic-interposition,
   that defines memcmp and calls it: GCC calls the unit's own memcmp
   through its local alias, memcmp.localalias, which binds to it whatever
   else the process defines.  The call the plugin sends to
   __memprof_memcmp must pass that alias, not memcmp by name: a library
   dlopen'ed with RTLD_LOCAL would otherwise have the C library's memcmp
   called instead of its own (found by the dynamic linker in the global
   scope first).  Likewise for strlen.  */
/* { dg-do compile { target x86_64-*-* } } */
/* { dg-options "-O2 -fPIC -fno-semantic-interposition -fplugin-arg-memprof-dump" } */

#include <string.h>

int own_calls;

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
  own_calls++;
  while (text[n] != '\0')
    n++;
  return n;
}

__attribute__ ((noipa)) int
compare (const char *a, const char *b, size_t n)
{
  return memcmp (a, b, n);
}

__attribute__ ((noipa)) size_t
length (const char *text)
{
  return strlen (text);
}

/* { dg-final { scan-tree-dump-times "__memprof_memcmp \\(a_\[0-9\]+\\(D\\), b_\[0-9\]+\\(D\\), n_\[0-9\]+\\(D\\), memcmp.localalias\\)" 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "__memprof_strlen \\(text_\[0-9\]+\\(D\\), strlen.localalias\\)" 1 "memprof" } } */
