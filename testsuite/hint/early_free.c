/* free before libmemprof_hint's constructors ran: the program's
   preinit_array runs before any shared object's initializer, so its
   frees reach the library's free while jemalloc's is not looked up yet
   (first_plain_free in cache.c looks it up on the way).  They must reach
   jemalloc's free: a block freed there is the next malloc of its size
   (jemalloc's thread cache hands out the last block freed), and the
   program runs to the end.  */

#include <stdint.h>
#include <stdlib.h>

#include "check.h"

static void *early_first, *early_second;
static int early_ran;

static void
allocate_early (void)
{
  early_first = malloc (48);
  free (early_first);
  early_second = malloc (48);
  free (early_second);
  free (NULL);
  early_ran = 1;
}

__attribute__ ((section (".preinit_array"),
                used)) static void (*preinit_entry) (void)
    = allocate_early;

int
main (void)
{
  void *later;

  CHECK (early_ran, "the program's preinit function ran");
  CHECK (early_first != NULL && early_second == early_first,
         "a block freed before the library's constructors is the next "
         "malloc (48): jemalloc's free had it (%p, then %p)",
         early_first, early_second);
  later = malloc (48);
  CHECK (later == early_second,
         "and the block freed last before them is the first malloc (48) "
         "of main (%p, %p)",
         early_second, later);
  free (later);
  puts ("early_free done");
  return check_failures != 0;
}
