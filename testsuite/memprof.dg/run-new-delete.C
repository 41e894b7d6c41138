// operator new[] and delete[] go through the runtime: new int[10] is a
// 40-byte block, and 10 stores through a non-inlined accessor are its 10
// accesses, at every level.
// { dg-do run }
// { dg-memprof-options "print_text=1:write_profile=0" }

__attribute__ ((noipa)) void
put (int *p, int i)
{
  p[i] = i;
}

__attribute__ ((noipa)) void
release (int *p)
{
  delete[] p;
}

int
main ()
{
  int *block = new int[10];
  for (int i = 0; i < 10; i++)
    put (block, i);
  release (block);
  return 0;
}

// { dg-output "alloc_count 1, size \\(ave/min/max\\) 40.00 / 40 / 40\[^\\n\]*\n\[^\\n\]*access_count \\(ave/min/max\\): 10.00 / 10 / 10\n" }
