/* sample-accesses=RATE and access-burst=N: the gap is N * (RATE - 1)
   checks, and a counted access adds RATE.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-dump -fplugin-arg-memprof-sample-accesses=8 -fplugin-arg-memprof-access-burst=50 " } */

void
scale (long *a, long n)
{
  for (long i = 0; i < n; i++)
    a[i] = a[i] * 3 + i;
}

/* { dg-final { scan-tree-dump "one access in 8 counted as 8" "memprof" } } */
/* The switch on each copy's back edge gets the burst and the gap; scale
   calls no function, so its entry only reads the countdown.  */
/* { dg-final { scan-tree-dump-times "\"D\" 50, \"S\" 350" 2 "memprof" } } */
/* One update for the load and the store of a[i], adding 2 * 8.  */
/* { dg-final { scan-tree-dump-times " \\+ 16;" 1 "memprof" { -O2 } } } */
