/* An absolute threshold of LLVM's and one relative to the run, together:
   an error that names both.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-use=use-threshold-conflict.mprof -fplugin-arg-memprof-cold-lifetime=1 -fplugin-arg-memprof-cold-lifetime-share=5" } */
int x;
/* { dg-error "memprof: .-fplugin-arg-memprof-cold-lifetime. and .-fplugin-arg-memprof-cold-lifetime-share. disagree" "" { target *-*-* } 0 } */
/* { dg-prune-output "failed to initialize plugin" } */
