/* The thresholds of globals, and remarks: with global-hot-density=5 and
   global-cold-size=8192, only the densest array is hot and only the
   largest never-accessed one cold; a note at each variable placed.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-use=use-globals-thresholds.mprof -fplugin-arg-memprof-global-hot-density=5 -fplugin-arg-memprof-global-cold-size=8192 -fplugin-arg-memprof-remarks" } */
/* { dg-memprof-profile-run } */

long very_hot[64]; /* { dg-message "memprof: .very_hot.: hot \\(512 bytes, \[0-9\]+ accesses, \[0-9.\]+ per byte\\): placed in ..bss.hot.very_hot." } */
long warm[512];
char big_cold[8192]; /* { dg-message "memprof: .big_cold.: cold \\(8192 bytes, 0 accesses, 0 per byte\\): placed in ..bss.unlikely.big_cold." } */
char small_cold[4096];

__attribute__ ((noipa)) long
work (int rounds)
{
  long sum = 0;
  for (int r = 0; r < rounds; r++)
    {
      for (int i = 0; i < 64; i++)
        very_hot[i] += i;
      if (r < 10)
        for (int i = 0; i < 512; i++)
          warm[i] += i;
    }
  if (rounds < 0)
    big_cold[1] = small_cold[2];
  return sum + very_hot[3] + warm[5];
}

int
main (void)
{
  return work (100) == 42;
}

/* { dg-final { scan-tree-dump "memprof-globals: warm: 4096 bytes, \[0-9\]+ accesses, \[0-9.\]+ per byte: neither hot nor cold: left alone\n" "memprof" } } */
/* { dg-final { scan-tree-dump "memprof-globals: small_cold: 4096 bytes, 0 accesses, 0 per byte: neither hot nor cold: left alone\n" "memprof" } } */
/* { dg-final { scan-compiler-output "globals: 1 hot, 1 cold" } } */
