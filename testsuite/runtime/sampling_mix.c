/* Eleven allocation sites for the sampling accuracy check: site I makes
   2,000 allocations of 640 << I bytes and touches each 1024 >> I times,
   so by bytes the sites rank 10, 9, ..., 0 and by accesses 0, 1, ..., 10,
   each twice the next.  With sample_interval, the top ten by bytes and by
   accesses must be those of the full profile.  */
#include <stdio.h>
#include <stdlib.h>

#define COUNT 2000

#define SITE(I)                                                                \
  __attribute__ ((noipa)) static void site_##I (void)                          \
  {                                                                            \
    for (int n = 0; n < COUNT; n++)                                            \
      {                                                                        \
        size_t size = (size_t) 640 << I;                                       \
        volatile char *block = malloc (size);                                  \
        for (int t = 0; t < (1024 >> I); t++)                                  \
          block[(size_t) t * 8 % size] = (char) t;                             \
        free ((void *) block);                                                 \
      }                                                                        \
  }

SITE (0)
SITE (1)
SITE (2)
SITE (3)
SITE (4)
SITE (5)
SITE (6)
SITE (7)
SITE (8)
SITE (9)
SITE (10)

int
main (void)
{
  site_0 ();
  site_1 ();
  site_2 ();
  site_3 ();
  site_4 ();
  site_5 ();
  site_6 ();
  site_7 ();
  site_8 ();
  site_9 ();
  site_10 ();
  printf ("mix done\n");
  return 0;
}
