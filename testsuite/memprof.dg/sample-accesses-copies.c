/* -fplugin-arg-memprof-sample-accesses: a function with counted accesses
   becomes a plain and a counting copy, switched at its entry and at the
   back edge of its loop (bursts.cc); the counting copy's update adds the
   rate (100 by default), the switch gets the burst and the gap.  A loop
   that calls a function decrements the thread's countdown in memory.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-dump -fplugin-arg-memprof-sample-accesses -fplugin-arg-memprof-combine=none" } */

long
sum (const long *a, long n)
{
  long s = 0;
  for (long i = 0; i < n; i++)
    s += a[i];
  return s;
}

/* The loop has no call: its checks count down in a register.  */
/* { dg-final { scan-tree-dump "sample-accesses: sum copied \\(\[0-9\]+ blocks\\), 1 loop check\\(s\\) a copy \\(1 in a register\\), one access in 100 counted as 100" "memprof" } } */
void note (long);

void
report (const long *a, long n)
{
  for (long i = 0; i < n; i++)
    note (a[i]);
}

/* { dg-final { scan-tree-dump "sample-accesses: report copied \\(\[0-9\]+ blocks\\), 1 loop check\\(s\\) a copy \\(0 in a register\\)" "memprof" } } */
/* Five switch calls, each from an asm statement that keeps the caller's
   registers: one a copy on each loop's back edge, and report's entry;
   sum calls no function, so its entry only reads the countdown.  */
/* { dg-final { scan-tree-dump-times "call \\*__memprof_access_switch_preserving@GOTPCREL" 5 "memprof" } } */
/* { dg-final { scan-tree-dump "sum copied .*, the entry's check only reads" "memprof" } } */
/* { dg-final { scan-tree-dump-times "the entry's check only reads" 1 "memprof" } } */
/* One counted load a function, in the counting copy only, adding 100.  */
/* { dg-final { scan-tree-dump-times "instrument load" 2 "memprof" } } */
/* { dg-final { scan-tree-dump "totals for sum: 1 instrumented" "memprof" } } */
/* { dg-final { scan-tree-dump-times " \\+ 100;" 2 "memprof" } } */
