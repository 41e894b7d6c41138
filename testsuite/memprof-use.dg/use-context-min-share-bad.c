/* A share that is no percentage: an error that names the argument.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-use=use-threshold-share-bad.mprof -fplugin-arg-memprof-context-min-share=lots" } */
int x;
/* { dg-error "memprof: bad value .lots. in .-fplugin-arg-memprof-context-min-share.: expected a percentage from 0 to 100" "" { target *-*-* } 0 } */
/* { dg-prune-output "failed to initialize plugin" } */
