/* A profile that does not exist: an error that names it.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-use=no-such-profile.mprof" } */
int x;
/* { dg-error "memprof: cannot use the profile: no-such-profile.mprof: cannot open: No such file or directory" "" { target *-*-* } 0 } */
/* { dg-prune-output "failed to initialize plugin" } */
