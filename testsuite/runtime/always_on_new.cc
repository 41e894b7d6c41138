/* The always-on mode's operator new and delete (the runtime alone,
   sample_interval): the blocks sampling leaves out are glibc's, handed
   out and taken back by new/delete's fast path.  ROUNDS objects of 64
   bytes come from one site (alloc_node) for the count estimate, freed by
   sized and unsized delete, with arrays between them.  Then malloc and
   free hooks are installed while the program runs (when a runtime
   provides them): every new and delete after that must reach them, so
   the fast path must notice the hooks at once.  Prints the number of
   alloc_node calls and of hooked calls seen; exits 1 at the first wrong
   value.  */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

extern "C" int __sanitizer_install_malloc_and_free_hooks (
    void (*malloc_hook) (const volatile void *, size_t),
    void (*free_hook) (const volatile void *)) __attribute__ ((weak));

#define ROUNDS 200000
#define HOOKED 1000
#define HOOKED_SIZE 4242
static const char MAGIC[8] = "hooked!";

struct node
{
  long value[8];
};

static long hooked_news, hooked_deletes;

static void
on_malloc (const volatile void *, size_t size)
{
  if (size == HOOKED_SIZE)
    hooked_news++;
}

static void
on_free (const volatile void *pointer)
{
  if (memcmp ((const void *) pointer, MAGIC, sizeof MAGIC) == 0)
    hooked_deletes++;
}

static int
fail (const char *what, long i)
{
  printf ("wrong: %s at %ld\n", what, i);
  exit (1);
}

__attribute__ ((noinline)) static node *
alloc_node (long i)
{
  node *n = new node;
  for (int k = 0; k < 8; k++)
    n->value[k] = i + k;
  return n;
}

int
main ()
{
  static node *window[256];
  long calls = 0;
  for (long i = 0; i < ROUNDS; i++)
    {
      node *&slot = window[i & 255];
      if (slot != nullptr)
        {
          if (slot->value[7] != slot->value[0] + 7)
            fail ("node contents", i);
          if (i & 1)
            delete slot;
          else
            ::operator delete (slot);
        }
      slot = alloc_node (i);
      calls++;
      if ((i & 1023) == 0)
        {
          char *array = new char[100 + (i & 7)];
          memset (array, 1, 100);
          delete[] array;
        }
    }
  for (node *n : window)
    delete n;

  if (__sanitizer_install_malloc_and_free_hooks != nullptr)
    __sanitizer_install_malloc_and_free_hooks (on_malloc, on_free);
  for (long i = 0; i < HOOKED; i++)
    {
      char *block = static_cast<char *> (::operator new (HOOKED_SIZE));
      memcpy (block, MAGIC, sizeof MAGIC);
      ::operator delete (block);
    }
  if (__sanitizer_install_malloc_and_free_hooks == nullptr)
    hooked_news = hooked_deletes = HOOKED; /* without a runtime */
  printf ("calls %ld hooked %ld %ld\n", calls, hooked_news, hooked_deletes);
  return 0;
}
