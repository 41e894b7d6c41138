/* An unknown plugin argument is an error that lists the valid options;
   the plugin then fails to initialise.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-bogus" } */

int
main (void)
{
  return 0;
}

/* { dg-error "unknown option .*-fplugin-arg-memprof-bogus.*the options are: callbacks, reads=0\\|1" "" { target *-*-* } 0 } */
/* { dg-error "failed to initialize plugin" "" { target *-*-* } 0 } */
