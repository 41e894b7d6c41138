/* No sibling call loses an allocation's frames: at -O2 (no
   -fno-optimize-sibling-calls) a wrapper that returns malloc's result
   and its callers that return the wrapper's stay on the stack when
   malloc runs, so the context names xmalloc, both callers and main.
   -rdynamic lets the runtime's text dump name the functions.  */
/* { dg-do run } */
/* { dg-options "-rdynamic" } */
/* { dg-memprof-options "print_text=1:write_profile=0" } */

#include <stdlib.h>
#include <string.h>

__attribute__ ((noipa)) void *
xmalloc (size_t n)
{
  return malloc (n);
}

__attribute__ ((noipa)) char *
make_name (size_t n)
{
  return xmalloc (n);
}

__attribute__ ((noipa)) char *
make_label (size_t n)
{
  return make_name (n);
}

__attribute__ ((noipa)) void
fill (char *p, size_t n)
{
  memset (p, 'x', n);
}

int
main (void)
{
  char *label = make_label (100);
  fill (label, 100);
  free (label);
  return 0;
}

/* { dg-output "#0 0x\[0-9a-f\]+ in xmalloc\\+\[^\n\]*\n *#1 0x\[0-9a-f\]+ in make_name\\+\[^\n\]*\n *#2 0x\[0-9a-f\]+ in make_label\\+\[^\n\]*\n *#3 0x\[0-9a-f\]+ in main\\+" } */
