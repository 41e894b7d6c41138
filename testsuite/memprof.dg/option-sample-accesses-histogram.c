/* sample-accesses adds the rate at once: histogram's saturating bytes
   cannot, and the combination is refused.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-sample-accesses -fplugin-arg-memprof-histogram" } */

int
main (void)
{
  return 0;
}

/* { dg-error "sample-accesses.* cannot be combined with .*histogram" "" { target *-*-* } 0 } */
/* { dg-error "failed to initialize plugin" "" { target *-*-* } 0 } */
