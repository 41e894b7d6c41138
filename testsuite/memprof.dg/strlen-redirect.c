/* A strlen of a string GCC does not know stays a call of the C
   library's strlen at -O2 on x86-64: the plugin makes it a call of the
   runtime's __memprof_strlen (library_calls.cc), with strlen as the unit
   binds it.  A strlen GCC works out itself (a string literal at a
   variable offset: its length minus the offset) is left alone, and
   -minline-all-stringops leaves every call alone.  */
/* { dg-do compile { target x86_64-*-* } } */

#include <string.h>

__attribute__ ((noipa)) size_t
unknown_string (const char *text)
{
  return strlen (text);
}

__attribute__ ((noipa)) size_t
literal_suffix (int i)
{
  return strlen ("literal" + i);
}

__attribute__ ((noipa, target ("inline-all-stringops"))) size_t
inline_all (const char *text)
{
  return strlen (text);
}

/* { dg-final { scan-tree-dump-times "memprof: 1 strlen call\\(s\\) to __memprof_strlen" 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "__memprof_strlen \\(text_\[0-9\]+\\(D\\), (__builtin_)?strlen\\)" 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times " strlen \\(text_\[0-9\]+\\(D\\)\\)" 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "__memprof_strlen \\(&\"literal\"" 0 "memprof" } } */
