/* A bad value for stack-analysis is an error that names the valid
   values.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-stack-analysis=most" } */

int
main (void)
{
  return 0;
}

/* { dg-error "bad value .most. in .*stack-analysis.*: expected none, basic or full" "" { target *-*-* } 0 } */
/* { dg-error "failed to initialize plugin" "" { target *-*-* } 0 } */
