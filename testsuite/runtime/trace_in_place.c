/* The malloc API trace written to a trace_file that is a FIFO: 100
   allocations of 20000 bytes, a sync in the middle (which, for a regular
   file, links the final name early), a reset (which a file written in
   place refuses); prints what the API answered and exits with status 7.  */
#include <memprof/interface.h>
#include <stdio.h>
#include <stdlib.h>

/* Volatile: GCC may not remove a malloc whose block is only freed.  */
static void *volatile block;

int
main (void)
{
  int sync_status, reset_status;
  for (int i = 0; i < 50; i++)
    {
      block = malloc (20000);
      free (block);
    }
  sync_status = memprof_trace_sync ();
  reset_status = memprof_trace_reset ();
  for (int i = 0; i < 50; i++)
    {
      block = malloc (20000);
      free (block);
    }
  printf ("sync %d reset %d\n", sync_status, reset_status);
  return 7;
}
