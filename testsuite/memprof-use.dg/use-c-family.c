/* Every C allocation function of the malloc family at a cold site calls
   its hinted entry point with the same arguments and the cold hint.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-cold-lifetime=1" } */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

void *sink[8];

void
allocate_all (const char *text, size_t size)
{
  sink[0] = calloc (size, 8);
  sink[1] = realloc (sink[1], size);
  sink[2] = aligned_alloc (64, size);
  posix_memalign (&sink[3], 64, size);
  sink[4] = memalign (64, size);
  sink[5] = strdup (text);
  sink[6] = strndup (text, size);
}

/* { dg-final { scan-tree-dump "rewritten: _\[0-9\]+ = __memprof_hint_calloc \\(size_\[0-9\]+\\(D\\), 8, 1\\);" "memprof" } } */
/* { dg-final { scan-tree-dump "rewritten: _\[0-9\]+ = __memprof_hint_realloc \\(_\[0-9\]+, size_\[0-9\]+\\(D\\), 1\\);" "memprof" } } */
/* { dg-final { scan-tree-dump "rewritten: _\[0-9\]+ = __memprof_hint_aligned_alloc \\(64, size_\[0-9\]+\\(D\\), 1\\);" "memprof" } } */
/* { dg-final { scan-tree-dump "rewritten: (_\[0-9\]+ = )?__memprof_hint_posix_memalign \\(&\[^,\]+, 64, size_\[0-9\]+\\(D\\), 1\\);" "memprof" } } */
/* { dg-final { scan-tree-dump "rewritten: _\[0-9\]+ = __memprof_hint_memalign \\(64, size_\[0-9\]+\\(D\\), 1\\);" "memprof" } } */
/* { dg-final { scan-tree-dump "rewritten: _\[0-9\]+ = __memprof_hint_strdup \\(text_\[0-9\]+\\(D\\), 1\\);" "memprof" } } */
/* { dg-final { scan-tree-dump "rewritten: _\[0-9\]+ = __memprof_hint_strndup \\(text_\[0-9\]+\\(D\\), size_\[0-9\]+\\(D\\), 1\\);" "memprof" } } */
/* { dg-final { scan-tree-dump-times "rewritten:" 7 "memprof" } } */
