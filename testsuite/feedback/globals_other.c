/* The second file of globals_main.c's program.  */

#define WORDS 512

long hot_bss_3[WORDS];
char cold_bss_3[8192];
long hot_data_3[WORDS] = { 3 };
char cold_data_3[8192] = { 3 };
static char same_name[8192];

long
other_work (int rounds, int touch_cold)
{
  long sum = 0;
  for (int round = 0; round < rounds; round++)
    for (int i = 0; i < WORDS; i++)
      {
        hot_bss_3[i] += i;
        hot_data_3[i] += hot_bss_3[i];
        sum += hot_data_3[i];
      }
  if (touch_cold)
    {
      cold_bss_3[1] = cold_data_3[2];
      sum += same_name[3]++;
    }
  return sum;
}
