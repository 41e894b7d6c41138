// Instrumented code in a function with try/catch and a throw still runs
// correctly: the counter updates inserted before the accesses do not
// break the EH edges.  8 stores, 4 loads in the handlers and 8 loads
// afterwards give 20 accesses to the 32-byte block.
// { dg-do run }
// { dg-memprof-options "print_text=1:write_profile=0" }

__attribute__ ((noipa)) void
put (int *p, int i, int v)
{
  p[i] = v;
}

__attribute__ ((noipa)) int
get (int *p, int i)
{
  return p[i];
}

__attribute__ ((noipa)) void
check (int v)
{
  if (v > 3)
    throw v;
}

__attribute__ ((noipa)) int
run (int *block)
{
  int caught = 0;
  for (int i = 0; i < 8; i++)
    {
      try
        {
          put (block, i, i);
          check (i);
        }
      catch (int e)
        {
          caught += get (block, e);
        }
    }
  return caught;
}

int
main ()
{
  int *block = new int[8];
  int caught = run (block);
  int sum = 0;
  for (int i = 0; i < 8; i++)
    sum += get (block, i);
  delete[] block;
  return caught == 4 + 5 + 6 + 7 && sum == 28 ? 0 : 1;
}

// { dg-output "alloc_count 1, size \\(ave/min/max\\) 32.00 / 32 / 32\[^\\n\]*\n\[^\\n\]*access_count \\(ave/min/max\\): 20.00 / 20 / 20\n" }
