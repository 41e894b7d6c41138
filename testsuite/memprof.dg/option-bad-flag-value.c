/* A boolean argument takes only 0 or 1: reads=2 is an error.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-reads=2" } */

int
main (void)
{
  return 0;
}

/* { dg-error "bad value .2. in .*-fplugin-arg-memprof-reads=2.*: expected 0 or 1" "" { target *-*-* } 0 } */
/* { dg-error "failed to initialize plugin" "" { target *-*-* } 0 } */
