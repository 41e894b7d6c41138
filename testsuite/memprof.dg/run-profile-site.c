/* scan-memprof-site reads the run's profile: make_node allocates 10
   blocks of 24 bytes, each written 3 times (one access per store), keeps
   2 of them to the end and main reads one field of each of those (32
   accesses); make_buffer allocates 4096 bytes once and frees them
   untouched.  No sibling calls, so that make_buffer's malloc is called
   from make_buffer at -O2 too.  */
/* { dg-do run } */
/* { dg-options "-fno-optimize-sibling-calls" } */

#include <stdlib.h>

struct node
{
  long a, b, c;
};

static struct node *kept[2];

__attribute__ ((noipa)) struct node *
make_node (long i)
{
  struct node *n = malloc (sizeof *n);
  n->a = i;
  n->b = i + 1;
  n->c = i + 2;
  return n;
}

__attribute__ ((noipa)) char *
make_buffer (void)
{
  return malloc (4096);
}

int
main (void)
{
  for (long i = 0; i < 10; i++)
    {
      struct node *n = make_node (i);
      if (i < 2)
        kept[i] = n;
      else
        free (n);
    }
  free (make_buffer ());
  return kept[0]->a + kept[1]->a == 1 ? 0 : 1;
}

/* { dg-final { scan-memprof-site "make_node" "allocs == 10" "bytes == 240" "accesses == 32" "live == 48" "live_allocs == 2" "contexts == 1" } } */
/* { dg-final { scan-memprof-site "make_buffer" "allocs == 1" "bytes == 4096" "accesses == 0" "live == 0" } } */
