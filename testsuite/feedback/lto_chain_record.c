/* The outer wrapper of the clone chain test (lto_clone.py's chain
   variants): new_record allocates through lto_alloc.c's new_block, in
   another unit, and is called by lto_chain_cold.c's cold path and
   lto_main.c's hot path (with -DCHAIN), two more units.  Its one call of
   new_block has mixed contexts; they part only at new_record's
   callers.  */

#include <stddef.h>
#include <stdlib.h>

void *new_block (size_t size);

/* Counted after the call, so that the call is not a tail call (its
   frame would be missing from the contexts).  */
unsigned long records;

__attribute__ ((noinline)) void *
new_record (size_t size)
{
  void *record = new_block (size);
  records++;
  return record;
}
