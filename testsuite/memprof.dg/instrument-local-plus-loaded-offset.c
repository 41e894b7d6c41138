/* A local's address plus an offset loaded from memory,
   (int *) ((uintptr_t) buf + *offp), may point anywhere (the loaded value
   may be a pointer difference): is_pure_offset refuses a load, so the
   access is instrumented.  The load of *offp itself is instrumented
   too.  */
/* { dg-do compile } */

#include <stdint.h>

void consume (int *);

__attribute__ ((noipa)) int
at_offset (const uintptr_t *offp)
{
  int buf[8];
  consume (buf);
  int *p = (int *) ((uintptr_t) buf + *offp);
  return *p;
}

/* { dg-final { scan-tree-dump-times "memprof: instrument load \\*offp_\[0-9\]+\\(D\\) " 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: instrument load \\*p_\[0-9\]+ " 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: skip " 0 "memprof" } } */
