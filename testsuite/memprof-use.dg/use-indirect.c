/* An allocator reached only through a function pointer (an
   interpreter's allocator function, stored at start-up): when its call
   is ambiguous, the remark says that no clone of it can be called in its
   callers' place.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-cold-lifetime=1 -fplugin-arg-memprof-remarks" } */
#include <stdlib.h>

static void *
allocator (void *unused, void *block, size_t old_size, size_t new_size)
{
  (void) unused;
  (void) old_size;
  return realloc (block, new_size); /* { dg-message "memprof: .realloc. call: ambiguous: its contexts disagree \\(2 contexts, \[^;\]*; bytes 90.0% cold, 10.0% hot, 0.0% notcold; the first caller tells the classes apart; allocator is reached only through function pointers, so no clone can be called in its place\\); calls the context-classified entry point \\(2 cold or hot contexts, told apart by 1 caller frame; 1 for all\\)" } */
}

void *(*volatile the_allocator) (void *, void *, size_t, size_t) = allocator;

/* { dg-final { scan-tree-dump "realloc call at \[^\n\]*:14:10: frames allocator:4:10: 2 contexts matched \\(1 cold, 1 hot, 0 notcold\\): ambiguous" "memprof" } } */
