/* Built as a shared library in the other mode than mixed_main.c.  */
__attribute__ ((noipa)) void
lib_touch (volatile char *p, int n)
{
  for (int i = 0; i < n; i++)
    p[i]++;
}
