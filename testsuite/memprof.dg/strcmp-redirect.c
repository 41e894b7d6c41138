/* strcmp and strncmp calls that stay calls of the C library's at -O2 on
   x86-64 become calls of the runtime's __memprof_strcmp and
   __memprof_strncmp (library_calls.cc).  GCC expands inline a comparison
   with a constant string when it compares at most
   --param builtin-string-cmp-inline-length bytes (3): those are left
   alone, at -O2 only (they are calls at -O0).  */
/* { dg-do compile { target x86_64-*-* } } */

#include <string.h>

__attribute__ ((noipa)) int
two_unknown (const char *a, const char *b)
{
  return strcmp (a, b);
}

__attribute__ ((noipa)) int
bounded_unknown (const char *a, const char *b, size_t n)
{
  return strncmp (a, b, n);
}

/* "null" is 5 bytes with its NUL, the bound 4: more than 3, a call.  */
__attribute__ ((noipa)) int
long_literal (const char *a)
{
  return strncmp (a, "null", 4);
}

/* "ab" is 3 bytes with its NUL: expanded inline at -O2.  */
__attribute__ ((noipa)) int
short_literal (const char *a)
{
  return strcmp (a, "ab");
}

/* { dg-final { scan-tree-dump-times "memprof: 1 strcmp call\\(s\\) to __memprof_strcmp" 1 "memprof" { target *-*-* } } } */
/* { dg-final { scan-tree-dump-times "memprof: 1 strncmp call\\(s\\) to __memprof_strncmp" 2 "memprof" } } */
/* { dg-final { scan-tree-dump-times "__memprof_strncmp \\(a_\[0-9\]+\\(D\\), \"null\", 4, (__builtin_)?strncmp\\)" 1 "memprof" } } */
