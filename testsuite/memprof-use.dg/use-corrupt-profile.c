/* A broken profile: an error that names the file, the line and what was
   expected there.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-use=$srcdir/memprof-use.dg/bad-profile.txt" } */
int x;
/* { dg-error "memprof: cannot use the profile: \[^:\]*bad-profile.txt: line 9: expected a number after .LineOffset:." "" { target *-*-* } 0 } */
/* { dg-prune-output "failed to initialize plugin" } */
