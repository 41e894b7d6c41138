/* Profile feedback for global variables, end to end (run.py): hot and
   cold globals declared in alternation in two files, in .bss and in
   .data, and a static of the same name in each file, hot in this one and
   cold in the other.  The hot ones are accessed in every round, the cold
   ones never.  */

#include <stdio.h>

#define WORDS 512

long hot_bss_1[WORDS];
char cold_bss_1[8192];
long hot_bss_2[WORDS];
char cold_bss_2[8192];
long hot_data_1[WORDS] = { 1 };
char cold_data_1[8192] = { 1 };
long hot_data_2[WORDS] = { 2 };
char cold_data_2[8192] = { 2 };
static long same_name[WORDS];

long other_work (int rounds, int touch_cold);

int
main (int argc, char **argv)
{
  long sum = 0;
  (void) argv;
  for (int round = 0; round < 20; round++)
    for (int i = 0; i < WORDS; i++)
      {
        hot_bss_1[i] += i;
        hot_bss_2[i] += hot_bss_1[i];
        hot_data_1[i] += hot_bss_2[i];
        hot_data_2[i] += hot_data_1[i];
        same_name[i] += hot_data_2[i];
      }
  /* Never true when run without arguments: the cold globals stay cold.  */
  if (argc > 3)
    {
      cold_bss_1[1] = cold_bss_2[2];
      cold_data_1[3] = cold_data_2[4];
    }
  sum = other_work (20, argc > 3);
  printf ("%ld %ld %ld\n", sum, hot_data_2[WORDS - 1], same_name[7]);
  return 0;
}
