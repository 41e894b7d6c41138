/* Instrumented code that runs before the runtime's start-up: an IFUNC
   resolver calling an instrumented function that loads through a pointer,
   a .preinit_array function doing the same, and a target_clones function
   (GCC's own resolver).  All run before any constructor, while
   __memprof_shadow_base would still be 0 without the reservation made when
   the runtime is relocated (runtime/shadow.c).  The block made in main is
   written once and read through pick exactly READS times: the profile must
   count READS + 1 accesses.  */
#include <stdio.h>
#include <stdlib.h>

#define READS 5

int table[4] = { 1, 7, 0, 0 };
int *volatile table_pointer = table;
static int seen_before_start;

/* noipa: not taken for pure, each call reads.  */
__attribute__ ((noipa)) int
pick (int *p)
{
  return p[0];
}

static int
add_one (int x)
{
  return x + 1;
}

static int
add_two (int x)
{
  return x + 2;
}

static void *
resolve_add (void)
{
  return pick (table_pointer) ? (void *) add_one : (void *) add_two;
}

int add (int) __attribute__ ((ifunc ("resolve_add")));

static void
before_start (void)
{
  seen_before_start = table_pointer[1];
}

__attribute__ ((section (".preinit_array"),
                used)) static void (*const run_before_start) (void)
    = before_start;

__attribute__ ((target_clones ("avx2", "default"))) int
sum (int *p, int n)
{
  int s = 0;
  for (int i = 0; i < n; i++)
    s += p[i];
  return s;
}

__attribute__ ((noinline)) static int *
make_block (void)
{
  return malloc (64);
}

int
main (void)
{
  int *block = make_block ();
  int total = 0;
  block[0] = 3;
  for (int i = 0; i < READS; i++)
    total += pick (block);
  printf ("%d %d %d %d\n", add (1), seen_before_start, total, sum (table, 4));
  free (block);
  return 3;
}
