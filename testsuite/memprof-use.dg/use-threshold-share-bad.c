/* A share of the run over 100%: an error that names the argument.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-use=use-threshold-share-bad.mprof -fplugin-arg-memprof-cold-lifetime-share=150" } */
int x;
/* { dg-error "memprof: bad value .150. in .-fplugin-arg-memprof-cold-lifetime-share.: expected a percentage, 0 to 100" "" { target *-*-* } 0 } */
/* { dg-prune-output "failed to initialize plugin" } */
