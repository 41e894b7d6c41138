/* Accesses to global variables, counted by the plugin's instrumentation
   and written to the side file per 64-byte granule of the program's data:
   a hot array, a cold one never touched, a variable touched a known
   number of times, a read-only table, across dumps (cumulative) and
   memprof_reset (cleared).  Every variable is volatile, so that each
   access in the source is one instrumented access at any -O level, and
   each sits alone in its granules.

     dump 0 (memprof_dump): hot_array 160 per granule (10 rounds of a load
       and a store of each of its 8 words), counted 1000, squares 300
     dump 1 (memprof_dump): the same, counted 1500 (cumulative)
     dump 2 (exit, after memprof_reset): counted 100, nothing else  */

#include <stdio.h>

#include "memprof/interface.h"

#define HOT_WORDS 1024
#define ALIGNED __attribute__ ((aligned (64)))

volatile long hot_array[HOT_WORDS] ALIGNED;
volatile char cold_array[4096] ALIGNED;
struct
{
  volatile long value;
  char rest[56];
} counted ALIGNED = { 5, { 0 } };
static const int squares[16] ALIGNED
    = { 0, 1, 4, 9, 16, 25, 36, 49, 64, 81, 100, 121, 144, 169, 196, 225 };

/* COUNT loads and COUNT stores of counted.  */
__attribute__ ((noipa)) static void
touch_counted (int count)
{
  for (int i = 0; i < count; i++)
    counted.value = counted.value + 1;
}

__attribute__ ((noipa)) static long
read_squares (int count)
{
  long sum = 0;
  for (int i = 0; i < count; i++)
    sum += squares[i % 16];
  return sum;
}

int
main (void)
{
  for (int round = 0; round < 10; round++)
    for (int i = 0; i < HOT_WORDS; i++)
      hot_array[i] = hot_array[i] + i;
  touch_counted (500);
  long sum = read_squares (300);
  memprof_dump ();
  touch_counted (250);
  memprof_dump ();
  memprof_reset ();
  touch_counted (50);
  printf ("globals done %ld\n", sum);
  return 0;
}
