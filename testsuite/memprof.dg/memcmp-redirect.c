/* A memcmp whose length is known only at run time stays a call of the C
   library's memcmp at -O2 on x86-64: the plugin makes it a call of the
   runtime's __memprof_memcmp (library_calls.cc), which counts the bytes
   compared without the interposed memcmp's look-up of its caller.  A memcmp
   of constant length, which GCC may expand inline, and one whose result
   is only compared with 0 but of constant length, are left alone;
   -minline-all-stringops leaves every call alone (inline_all below).  */
/* { dg-do compile { target x86_64-*-* } } */

#include <string.h>

__attribute__ ((noipa)) int
variable_length (const char *a, const char *b, size_t n)
{
  return memcmp (a, b, n);
}

__attribute__ ((noipa)) int
equal_only (const char *a, const char *b, size_t n)
{
  return memcmp (a, b, n) == 0;
}

__attribute__ ((noipa)) int
constant_length (const char *a, const char *b)
{
  return memcmp (a, b, 24);
}

__attribute__ ((noipa, target ("inline-all-stringops"))) int
inline_all (const char *a, const char *b, size_t n)
{
  return memcmp (a, b, n);
}

/* { dg-final { scan-tree-dump-times "memprof: 1 memcmp call\\(s\\) to __memprof_memcmp" 2 "memprof" } } */
/* memcmp's address as the unit binds it is the last argument (the dump
   prints the builtin's name).  */
/* { dg-final { scan-tree-dump-times "__memprof_memcmp \\(a_\[0-9\]+\\(D\\), b_\[0-9\]+\\(D\\), n_\[0-9\]+\\(D\\), (__builtin_)?memcmp\\)" 2 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memcmp \\(a_\[0-9\]+\\(D\\), b_\[0-9\]+\\(D\\), 24\\)" 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times " memcmp \\(a_\[0-9\]+\\(D\\), b_\[0-9\]+\\(D\\), n_\[0-9\]+\\(D\\)\\)" 1 "memprof" } } */
