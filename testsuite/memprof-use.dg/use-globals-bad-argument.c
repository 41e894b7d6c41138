/* A bad threshold of globals: an error that names the argument.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-use=use-globals-bad-argument.mprof -fplugin-arg-memprof-global-hot-density=lots" } */
int x;
/* { dg-error "memprof: bad value .lots. in .-fplugin-arg-memprof-global-hot-density.: expected a number of accesses per byte, 0 or more" "" { target *-*-* } 0 } */
/* { dg-prune-output "failed to initialize plugin" } */
