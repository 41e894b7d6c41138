/* -fplugin-arg-memprof-stats prints one summary line per translation unit
   on stderr (print_unit_stats).  This unit has one load through a pointer
   (instrumented) and one store to a local array element whose address
   escapes (skipped as a local variable); the module constructor the
   plugin adds has no accesses.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-stats" } */

void consume (int *);

__attribute__ ((noipa)) int
mixed (int *p, int v)
{
  int local[2];
  local[1] = v;
  consume (local);
  return *p;
}

/* { dg-final { scan-compiler-output "memprof: \[^\\n\]*: \[0-9\]+ accesses, \[0-9\]+ instrumented" } } */
/* { dg-final { scan-compiler-output "memprof: \[^\\n\]*option-stats.c: 2 accesses, 1 instrumented \\(1 loads, 0 stores, 0 ranges\\), 1 skipped as stack \\(1 local variable," } } */
