/* -fplugin-arg-memprof-stack-analysis=basic skips an access whose base is
   directly a local (buffer[i]), but not one through a pointer chain that
   only "full" follows.  In stack_verdict, basic looks only at the
   MEM_REF's operand: an ADDR_EXPR of a local, or an alloca's result.
   buf + i with a variable i stays an SSA pointer *q_N at both levels:
   instrumented.  buf + 3 is *q_N at -O0 (instrumented), but -O2 folds it
   into MEM[&buf + 12B], an ADDR_EXPR: skipped.  */
/* { dg-do compile } */
/* { dg-options "-fplugin-arg-memprof-dump -fplugin-arg-memprof-stack-analysis=basic" } */

void consume (int *);

__attribute__ ((noipa)) int
direct (int i)
{
  int buffer[16];
  buffer[i & 15] = i;
  consume (buffer);
  return buffer[i & 15];
}

__attribute__ ((noipa)) int
variable_chain (int i)
{
  int buf[16];
  int *q = buf + i;
  *q = 5;
  consume (buf);
  return *q;
}

__attribute__ ((noipa)) int
constant_chain (void)
{
  int cbuf[16];
  int *r = cbuf + 3;
  *r = 5;
  consume (cbuf);
  return *r;
}

/* { dg-final { scan-tree-dump-times "memprof: skip (load|store) buffer\\\[\[^\\n\]*\\(stack: local variable\\)" 2 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: instrument (load|store) \\*q_" 2 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: instrument (load|store) \\*r_" 2 "memprof" { -O0 } } } */
/* { dg-final { scan-tree-dump-times "memprof: skip (load|store) \[^\\n\]*&cbuf\[^\\n\]*\\(stack: local variable\\)" 2 "memprof" { -O2 } } } */
/* { dg-final { scan-tree-dump-times "memprof: skip \[^\\n\]*\\(stack: pointer to stack\\)" 0 "memprof" } } */
