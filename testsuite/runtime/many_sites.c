/* Ninety-six allocation sites, called in turn ROUNDS times: more sites
   than fit the thread's table of sites known to the sampling census
   without collisions.  With a sample interval far above the bytes the
   program allocates, the census alone records: each site's first
   allocation, once.  A warm-up site (site_w) allocates first, twice, so that the
   countdown is running when the 96 sites' first allocations come (a
   site's first allocation does not start it).  Prints the number of
   allocations made.  */
#include <stdio.h>
#include <stdlib.h>

#define ROUNDS 50

/* Each SITE (N); defines site_N and declares it again (so that the
   invocation ends with a semicolon, as a declaration does).  */
#define SITE(n)                                                                \
  __attribute__ ((noinline)) static void site_##n (void)                       \
  {                                                                            \
    char *volatile block = malloc (16);                                        \
    block[0] = 1;                                                              \
    free (block);                                                              \
  }                                                                            \
  static void site_##n (void)
#define SITES8(n)                                                              \
  SITE (n##0);                                                                 \
  SITE (n##1);                                                                 \
  SITE (n##2);                                                                 \
  SITE (n##3);                                                                 \
  SITE (n##4);                                                                 \
  SITE (n##5);                                                                 \
  SITE (n##6);                                                                 \
  SITE (n##7)

SITES8 (1);
SITES8 (2);
SITES8 (3);
SITES8 (4);
SITES8 (5);
SITES8 (6);
SITES8 (7);
SITES8 (8);
SITES8 (9);
SITES8 (10);
SITES8 (11);
SITES8 (12);
SITE (w); /* the warm-up */

#define CALL8(n)                                                               \
  site_##n##0(), site_##n##1(), site_##n##2(), site_##n##3(), site_##n##4(),   \
      site_##n##5(), site_##n##6(), site_##n##7()

int
main (void)
{
  long calls = 0;
  site_w ();
  site_w ();
  for (int round = 0; round < ROUNDS; round++)
    {
      CALL8 (1), CALL8 (2), CALL8 (3), CALL8 (4), CALL8 (5), CALL8 (6);
      CALL8 (7), CALL8 (8), CALL8 (9), CALL8 (10), CALL8 (11), CALL8 (12);
      calls += 96;
    }
  printf ("calls %ld\n", calls);
  return 0;
}
