/* The pc map (pcmap.c): values kept per code address, and forgotten for
   the addresses of a module unloaded (pc_map_forget_range, at dlclose:
   stack.c's frame facts), on made-up addresses (0xe0000000 and up: no
   code lives there).  */

#include "internal.h"
#include "unit.h"

#define BASE ((uintptr_t) 0xe0000000)
#define ADDRESSES 2000

/* A value for the address ADDRESS that no other address has.  */
static uint64_t
value_for (uintptr_t address)
{
  return (address - BASE) * 2 + 1;
}

START_TEST (test_forget_range_clears_only_that_range)
{
  static struct pc_map map;
  for (uintptr_t i = 0; i < ADDRESSES; i++)
    pc_map_set (&map, BASE + i * 16, value_for (BASE + i * 16));
  /* The module: the middle half of the addresses.  */
  uintptr_t low = BASE + ADDRESSES / 4 * 16,
            high = BASE + ADDRESSES * 3 / 4 * 16;
  pc_map_forget_range (&map, low, high);
  size_t cleared = 0, kept = 0;
  for (uintptr_t i = 0; i < ADDRESSES; i++)
    {
      uintptr_t address = BASE + i * 16;
      uint64_t value = pc_map_get (&map, address);
      if (address >= low && address < high)
        cleared += value == 0;
      else
        kept += value == value_for (address);
    }
  ck_assert_uint_eq (cleared, ADDRESSES / 2);
  ck_assert_uint_eq (kept, ADDRESSES / 2);
  /* Code mapped there again learns its own values.  */
  pc_map_set (&map, low, 42);
  ck_assert_uint_eq (pc_map_get (&map, low), 42);
  ck_assert (pc_map_update (&map, low + 16, 0xff, 7, true));
  ck_assert_uint_eq (pc_map_get (&map, low + 16), 7);
}
END_TEST

START_TEST (test_forget_range_of_empty_map)
{
  static struct pc_map map;
  pc_map_forget_range (&map, BASE, BASE + 0x1000);
  ck_assert_uint_eq (pc_map_get (&map, BASE), 0);
}
END_TEST

Suite *
pcmap_suite (void)
{
  Suite *suite = suite_create ("pcmap");
  TCase *forget = tcase_create ("forget");
  tcase_add_test (forget, test_forget_range_clears_only_that_range);
  tcase_add_test (forget, test_forget_range_of_empty_map);
  suite_add_tcase (suite, forget);
  return suite;
}
