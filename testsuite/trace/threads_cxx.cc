// The C++ program testsuite/trace/run.py traces: every form of operator
// new and delete the runtime interposes, from 4 threads, with objects
// handed from one thread to the next.  Sizes are 20000 to 29999 bytes,
// as in threads.c.  Prints the calls it made.

#include <atomic>
#include <cstdio>
#include <new>
#include <thread>
#include <vector>

static void *volatile sink;
static std::atomic<unsigned long> news, array_news, deletes, array_deletes;

struct alignas (256) Aligned
{
  char bytes[20480];
};

static void
work (int self, std::vector<char *> *mine, std::vector<char *> *from,
      std::atomic<int> *ready)
{
  for (int i = 0; i < 200; i++)
    {
      char *p = new char[20000 + i];
      sink = p;
      delete[] p;
      array_news++, array_deletes++;
      Aligned *a = new Aligned; // aligned new, sized aligned delete
      sink = a;
      delete a;
      news++, deletes++;
      void *q = ::operator new (21000 + i, std::nothrow);
      sink = q;
      ::operator delete (q, std::nothrow);
      news++, deletes++;
      void *r = ::operator new (22000 + i, std::align_val_t (64));
      sink = r;
      ::operator delete (r, std::align_val_t (64));
      news++, deletes++;
      void *s
          = ::operator new[] (23000 + i, std::align_val_t (128), std::nothrow);
      sink = s;
      ::operator delete[] (s, std::align_val_t (128), std::nothrow);
      array_news++, array_deletes++;
      void *t = ::operator new (24000 + i);
      sink = t;
      ::operator delete (t, 24000 + i); // sized
      news++, deletes++;
    }
  for (int i = 0; i < 100; i++)
    {
      mine->push_back (new char[25000 + i]);
      array_news++;
    }
  (*ready)++;
  while (ready->load () < 4)
    std::this_thread::yield ();
  for (char *p : *from)
    {
      delete[] p;
      array_deletes++;
    }
  (void) self;
}

int
main ()
{
  std::vector<char *> lists[4];
  for (auto &list : lists)
    list.reserve (100);
  std::atomic<int> ready (0);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; i++)
    threads.emplace_back (work, i, &lists[i], &lists[(i + 3) % 4], &ready);
  for (auto &thread : threads)
    thread.join ();
  std::printf ("new %lu\nnew[] %lu\ndelete %lu\ndelete[] %lu\n", news.load (),
               array_news.load (), deletes.load (), array_deletes.load ());
  return 0;
}
