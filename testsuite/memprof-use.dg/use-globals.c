/* Hot and cold global variables: with a profile of this very program
   (made by running it: dg-memprof-profile-run), each variable goes to the
   section of its temperature, in the family GCC would have chosen (.bss
   for zeros, .data, .rodata for constants), and the others are left
   alone with the reason in the dump.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-use=use-globals.mprof" } */
/* { dg-memprof-profile-run } */

long hot_bss[512];
char cold_bss[4096];
long hot_data[512] = { 1 };
char cold_data[4096] = { 1 };
const long hot_rodata[512] = { 1, 2, 3 };
const char cold_rodata[4096] = { 1 };
static long hot_static[512];
long lukewarm[4096];
char small_cold[16];
long in_user_section[512] __attribute__ ((section (".user_data")));
__thread long per_thread[512];

__attribute__ ((noipa)) long
work (int rounds)
{
  static long ticks[64];
  long sum = 0;
  for (int r = 0; r < rounds; r++)
    for (int i = 0; i < 512; i++)
      {
        hot_bss[i] += i;
        hot_data[i] += hot_bss[i];
        hot_static[i] += hot_data[i];
        sum += hot_rodata[i];
        ticks[i % 64]++;
        in_user_section[i]++;
        per_thread[i]++;
      }
  for (int i = 0; i < 100; i++)
    lukewarm[i * 40] = i;
  if (rounds < 0)
    {
      cold_bss[1] = cold_data[2] + cold_rodata[rounds + 100];
      small_cold[3] = 1;
    }
  return sum + ticks[3] + hot_static[7] + lukewarm[40];
}

int
main (void)
{
  return work (10) == 42;
}

/* { dg-final { scan-tree-dump "memprof-globals: hot_bss: 4096 bytes, \[0-9\]+ accesses, \[0-9.e+\]+ per byte: hot: placed in .bss.hot.hot_bss\n" "memprof" } } */
/* { dg-final { scan-tree-dump "memprof-globals: cold_bss: 4096 bytes, 0 accesses, 0 per byte: cold: placed in .bss.unlikely.cold_bss\n" "memprof" } } */
/* { dg-final { scan-tree-dump "memprof-globals: hot_data: \[^\n\]*: hot: placed in .data.hot.hot_data\n" "memprof" } } */
/* { dg-final { scan-tree-dump "memprof-globals: cold_data: \[^\n\]*: cold: placed in .data.unlikely.cold_data\n" "memprof" } } */
/* { dg-final { scan-tree-dump "memprof-globals: hot_rodata: \[^\n\]*: hot: placed in .rodata.hot.hot_rodata\n" "memprof" } } */
/* { dg-final { scan-tree-dump "memprof-globals: cold_rodata: \[^\n\]*: cold: placed in .rodata.unlikely.cold_rodata\n" "memprof" } } */
/* { dg-final { scan-tree-dump "memprof-globals: hot_static: \[^\n\]*: hot: placed in .bss.hot.hot_static\n" "memprof" } } */
/* A function-local static: its symbol is ticks.N.  */
/* { dg-final { scan-tree-dump "memprof-globals: ticks.\[0-9\]+: \[^\n\]*: hot: placed in .bss.hot.ticks.\[0-9\]+\n" "memprof" } } */
/* { dg-final { scan-tree-dump "memprof-globals: lukewarm: 32768 bytes, 10\[0-9\] accesses, \[^\n\]*: neither hot nor cold: left alone\n" "memprof" } } */
/* { dg-final { scan-tree-dump "memprof-globals: small_cold: 16 bytes, 0 accesses, \[^\n\]*: neither hot nor cold: left alone\n" "memprof" } } */
/* { dg-final { scan-tree-dump "memprof-globals: in_user_section: it has a section: left alone\n" "memprof" } } */
/* { dg-final { scan-tree-dump "memprof-globals: per_thread: thread-local: left alone\n" "memprof" } } */
/* { dg-final { scan-tree-dump-times "placed in" 8 "memprof" } } */
/* { dg-final { scan-compiler-output "globals: 5 hot, 3 cold" } } */
/* The object's sections: hot and cold ones of each family, with the
   type and flags of the family (NOBITS for .bss, read-only .rodata).  */
/* { dg-final { scan-object-sections {\.bss\.hot\.hot_bss +NOBITS +[0-9a-f]+ [0-9a-f]+ [0-9a-f]+ 00 +WA} } } */
/* { dg-final { scan-object-sections {\.bss\.unlikely\.cold_bss +NOBITS +[0-9a-f]+ [0-9a-f]+ 001000 00 +WA} } } */
/* { dg-final { scan-object-sections {\.data\.hot\.hot_data +PROGBITS +[0-9a-f]+ [0-9a-f]+ 001000 00 +WA} } } */
/* { dg-final { scan-object-sections {\.data\.unlikely\.cold_data +PROGBITS +[0-9a-f]+ [0-9a-f]+ 001000 00 +WA} } } */
/* { dg-final { scan-object-sections {\.rodata\.hot\.hot_rodata +PROGBITS +[0-9a-f]+ [0-9a-f]+ 001000 00 +A } } } */
/* { dg-final { scan-object-sections {\.rodata\.unlikely\.cold_rodata +PROGBITS +[0-9a-f]+ [0-9a-f]+ 001000 00 +A } } } */
/* { dg-final { scan-object-sections {\.user_data +PROGBITS} } } */
