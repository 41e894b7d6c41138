/* A bad value for combine is an error that names the valid values.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-combine=all" } */

int
main (void)
{
  return 0;
}

/* { dg-error "bad value .all. in .*combine.*: expected none, block or loop" "" { target *-*-* } 0 } */
/* { dg-error "failed to initialize plugin" "" { target *-*-* } 0 } */
