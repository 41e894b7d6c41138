/* A clone depth out of range: an error that names the argument.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-use=use-threshold-share-bad.mprof -fplugin-arg-memprof-clone-depth=9" } */
int x;
/* { dg-error "memprof: bad value .9. in .-fplugin-arg-memprof-clone-depth.: expected a number of functions from 1 to 6" "" { target *-*-* } 0 } */
/* { dg-prune-output "failed to initialize plugin" } */
