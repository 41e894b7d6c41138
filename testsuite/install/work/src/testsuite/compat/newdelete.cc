// C++ allocation sites with known counts: new/delete of objects in a
// helper, new[]/delete[], aligned new, nothrow new[], std::vector growth,
// and an object still live at exit.
// GCC's line table puts the column of a new-expression on its type (or
// on the closing bracket of an array type), and the column of a call
// nested in another call's arguments on the outer call's parenthesis.
// expect: make_list:5:24 main:2:24 count=10 accesses=20 size=560
// expect: main:3:28 count=1 accesses=4 size=400
// expect: main:8:20 count=1 accesses=6 size=256
// expect: main:11:42 count=1 accesses=1 size=33
// expect: main:19:20 count=1 accesses=5 size=56
#include <cstdio>
#include <new>
#include <vector>

#include "touch.h"

struct Node
{
  Node *next;
  long value[6];
};

struct alignas (128) Wide
{
  char bytes[200];
};

__attribute__ ((noinline)) static Node *
make_list (int count)
{
  Node *head = nullptr;
  for (int i = 0; i < count; i++)
    {
      Node *node = new Node;
      touch (node, 2);
      node->next = head;
      node->value[0] = i;
      head = node;
    }
  return head;
}

__attribute__ ((noinline)) static long
free_list (Node *head)
{
  long sum = 0;
  while (head != nullptr)
    {
      Node *next = head->next;
      sum += head->value[0];
      delete head;
      head = next;
    }
  return sum;
}

int
main ()
{
  long sum = free_list (make_list (10));
  long *array = new long[50];
  touch (array, 4);
  array[49] = 2;
  sum += array[49];
  delete[] array;
  Wide *wide = new Wide;
  touch (wide, 6);
  delete wide;
  char *text = new (std::nothrow) char[33];
  touch (text, 1);
  delete[] text;
  std::vector<int> numbers;
  for (int i = 0; i < 100; i++)
    numbers.push_back (i);
  for (int n : numbers)
    sum += n;
  Node *kept = new Node;
  touch (kept, 5);
  kept->value[1] = 3;
  std::printf ("sum %ld kept %ld\n", sum, kept->value[1]);
  return 0;
}
