/* A small function that stores what its allocation call returned (m4's
   define_user_macro around an inlined xstrdup) is cloned per class of
   its callers like a wrapper: the cold caller calls the cold clone, the
   hot caller the hot one.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-cold-lifetime=1" } */
#include <stdlib.h>

struct entry
{
  char *name;
  int flags;
};

__attribute__ ((noinline)) void
define_entry (struct entry *entry, size_t size)
{
  entry->name = malloc (size);
  entry->flags = 1;
}

void
for_log (struct entry *entry)
{
  define_entry (entry, 100);
}

void
for_table (struct entry *entry)
{
  define_entry (entry, 200);
}

/* { dg-final { scan-compiler-output "1 of 1 allocation calls matched, 1 ambiguous; 2 wrapper clones; rewritten: 1 cold, 1 hot" } } */
/* { dg-final { scan-ipa-dump "define_entry/\[0-9\]+ cloned as define_entry.memprof_cold.0/\[0-9\]+ for 1 cold caller" "memprof-clone" } } */
/* { dg-final { scan-ipa-dump "define_entry/\[0-9\]+ cloned as define_entry.memprof_hot.1/\[0-9\]+ for 1 hot caller" "memprof-clone" } } */
