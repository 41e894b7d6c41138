/* A static function that returns its stack-proven parameter or a null
   pointer (the error path): its callers' uses of the result are skipped
   as "pointer parameter: callers' frames".  */
/* { dg-do compile } */

struct buffer
{
  const char *content;
  unsigned long offset, length;
};

__attribute__ ((noinline)) static struct buffer *
skip_blanks (struct buffer *b)
{
  if (b->content == 0)
    return 0;
  while (b->offset < b->length && b->content[b->offset] == ' ')
    b->offset++;
  return b;
}

__attribute__ ((noinline)) static int
first (struct buffer *b)
{
  struct buffer *at = skip_blanks (b);
  if (at == 0 || at->offset >= at->length)
    return -1;
  return at->content[at->offset];
}

int
first_char (const char *text, unsigned long length)
{
  struct buffer b = { text, 0, length };
  return first (&b);
}

/* { dg-final { scan-ipa-dump "skip_blanks\[.a-z0-9\]{0,20}/\[0-9\]+ returns stack addresses" "memprof-stack-params" { -O2 } } } */
/* { dg-final { scan-tree-dump "memprof: skip load at_\[0-9\]+->offset \\(stack: pointer parameter: callers' frames\\)" "memprof" { -O2 } } } */
