/* A load through a pointer parameter is instrumented: the pointer may
   point anywhere, the heap included.  */
/* { dg-do compile } */

__attribute__ ((noipa)) int
read_one (int *p)
{
  return *p;
}

/* { dg-final { scan-tree-dump-times "instrument load \\*p" 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: skip " 0 "memprof" } } */
