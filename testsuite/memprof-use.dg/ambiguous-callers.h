/* The callers of an ambiguous allocation call, shared by
   use-ambiguous-depth.c and use-context-min-share.c, whose profiles name
   them: wrapper (the test's own, with its allocation call and the
   message expected there) is reached from for_log and for_table through
   one middle function, so their contexts part at depth 2.  Included
   after wrapper; the line offsets and columns of the calls are the
   profiles' (LineOffset 2, Column 10 each).  */

__attribute__ ((noinline, noipa)) void *
middle (size_t size)
{
  return wrapper (size);
}

void *
for_log (void)
{
  return middle (100);
}

void *
for_table (void)
{
  return middle (300);
}
