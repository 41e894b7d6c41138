// The counting code takes the address of the globals it counts; that must
// not change how the functions compiled after it are optimized.  Here a
// replaced operator delete writes a file-local static: once its address
// was taken, GCC's alias oracle let DCE elide the new/delete pair around
// a destructor that throws (at -O2), and `deleted' stayed 0 (as
// g++.dg/eh/delete1.C).
// { dg-do run }
// { dg-options "-std=gnu++17" }

static int deleted;

void
operator delete (void *) noexcept
{
  deleted = 1;
}

struct thrower
{
  ~thrower () noexcept (false)
  {
    throw 1;
  }
};

int
main ()
{
  deleted = 0;
  thrower *p = new thrower;
  try
    {
      delete p;
    }
  catch (...)
    {
      return deleted != 1;
    }
  return 2;
}
