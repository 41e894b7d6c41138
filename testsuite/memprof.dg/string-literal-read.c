/* A read of a string literal, "abc"[i], is a load of global storage: it
   is instrumented (is_memory_reference and reference_is_global both
   accept a STRING_CST base).  */
/* { dg-do compile } */

__attribute__ ((noipa)) char
letter (int i)
{
  return "abc"[i];
}

/* { dg-final { scan-tree-dump-times "memprof: instrument load \"abc\"\\\[i_\[0-9\]+\\(D\\)\\\] " 1 "memprof" } } */
