/* -fplugin-arg-memprof-stack-analysis=none: even an access to a local
   array is instrumented; nothing is skipped as stack.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-dump -fplugin-arg-memprof-stack-analysis=none" } */

void consume (int *);

__attribute__ ((noipa)) int
local_array (int i)
{
  int buffer[16];
  buffer[i & 15] = i;
  consume (buffer);
  return buffer[i & 15];
}

/* { dg-final { scan-tree-dump-times "memprof: instrument store buffer\\\[" 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: instrument load buffer\\\[" 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: skip " 0 "memprof" } } */
