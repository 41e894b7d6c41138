// Allocations of a C++ program that are not all its own, for
// test_noise.py: the C++ runtime's emergency exception pool (at start-up,
// in libstdc++.so), the C library's stdout buffer (under printf), a
// std::vector grown by inlined STL code, a std::string filled by
// libstdc++.so's own code, a buffer only a library function (strlen in
// the C library, uninstrumented) reads, and the program's own waste: a
// buffer never touched and a record leaked.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

struct Record
{
  long key;
  long value[7];
};

// Grown by std::vector's inlined code: the site is this function, not
// std::__new_allocator<Record>::allocate.
__attribute__ ((noipa)) static long
fill_records (int count)
{
  std::vector<Record> records;
  for (int i = 0; i < count; i++)
    records.push_back (Record{ i, { 0 } });
  long sum = 0;
  for (const Record &record : records)
    sum += record.key;
  return sum;
}

// 256 KiB written only by libstdc++.so (append's memset and memcpy): no
// instrumented access reaches it.
__attribute__ ((noipa)) static size_t
library_string (void)
{
  std::string text;
  text.append (256 * 1024, 'x');
  text.append ("end");
  return text.size ();
}

// Never touched by anyone.
__attribute__ ((noipa)) static void *
never_used (void)
{
  return malloc (64 * 1024);
}

// Still live at exit: the program's own leak.
__attribute__ ((noipa)) static char *
leaked_record (void)
{
  char *record = static_cast<char *> (malloc (100));
  record[0] = 1;
  return record;
}

int
main (int argc, char **argv)
{
  (void) argv;
  long sum = fill_records (1000 + argc);
  size_t size = library_string ();
  void *unused = never_used ();
  char *leak = leaked_record ();
  printf ("noise: %ld %zu %d\n", sum, size, leak[0]);
  free (unused);
  return 0;
}
