/* A bad rate for sample-accesses is an error that names the range.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-sample-accesses=1" } */

int
main (void)
{
  return 0;
}

/* { dg-error "bad value .1. in .*sample-accesses.*: expected a number from 2 to 1048576" "" { target *-*-* } 0 } */
/* { dg-error "failed to initialize plugin" "" { target *-*-* } 0 } */
