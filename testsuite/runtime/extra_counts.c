/* The side file's counts, one allocation context per function, built
   with the plugin so that instrumented code counts the accesses.
   Granules are 64 bytes (8 with -fplugin-arg-memprof-histogram and
   histogram=1); touched bytes are whole granules, at most the size.

     over_reserve   malloc (65536), the first 1 KiB written, freed:
                    touched 1024 bytes (16 granules, or 128)
     never_touched  malloc (3000), freed unread and unwritten:
                    1 untouched allocation, touched 0
     leak           3 x malloc (100), the first byte written, kept to
                    exit: live 3, 300 bytes; touched 3 x 64 (3 x 8)
     several        5 allocations of 10, 100, 200, 1000 and 64 bytes of
                    which the first 1, 0, 130, 1000 and 64 bytes are
                    written; the 200- and 1000-byte ones kept to exit:
                    1 untouched; touched 10 + 192 + 1000 + 64 = 1266
                    (8 + 136 + 1000 + 64 = 1208); live 2, 1200 bytes  */
#include <stdio.h>
#include <stdlib.h>

static char *kept[8];

__attribute__ ((noipa)) static void
fill (char *block, size_t bytes)
{
  for (size_t i = 0; i < bytes; i++)
    block[i] = (char) i;
}

__attribute__ ((noipa)) static void
over_reserve (void)
{
  char *block = malloc (65536);
  fill (block, 1024);
  free (block);
}

__attribute__ ((noipa)) static void
never_touched (void)
{
  char *volatile block = malloc (3000);
  free (block);
}

__attribute__ ((noipa)) static void
leak (void)
{
  for (int i = 0; i < 3; i++)
    {
      kept[i] = malloc (100);
      fill (kept[i], 1);
    }
}

__attribute__ ((noipa)) static void
several (void)
{
  static const size_t sizes[5] = { 10, 100, 200, 1000, 64 };
  static const size_t written[5] = { 1, 0, 130, 1000, 64 };
  for (int i = 0; i < 5; i++)
    {
      char *block = malloc (sizes[i]);
      fill (block, written[i]);
      if (sizes[i] == 200 || sizes[i] == 1000)
        kept[3 + i] = block;
      else
        free (block);
    }
}

int
main (void)
{
  over_reserve ();
  never_touched ();
  leak ();
  several ();
  printf ("counts done\n");
  return 0;
}
