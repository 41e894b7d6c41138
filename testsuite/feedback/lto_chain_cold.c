/* The cold path of the clone chain test (lto_chain_record.c, and
   lto_main.c with -DCHAIN): blocks kept and never read, in a unit of
   their own.  */

#include <stddef.h>

#define BLOCKS 512
#define SIZE 96

void *new_record (size_t size);

__attribute__ ((noinline)) void
cold_path_in (void **blocks)
{
  for (int i = 0; i < BLOCKS; i++)
    blocks[i] = new_record (SIZE);
}
