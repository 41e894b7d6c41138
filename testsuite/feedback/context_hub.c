/* Another caller of context_alloc.c's allocator (context_hints.py), for
   which frames keep a frame pointer.  Two kinds of contexts:

   - through hub, a big function standing for an interpreter's loop: its
     own two call sites tell cold from hot (their return addresses are
     read in make's frame), the frames above it tell nothing;
   - through mid: only the caller of mid tells cold from hot, so the
     table compares 3 caller frames (make < mid or hub < the next), and
     the walk reads the frames of wrapper, make, and mid or hub.

   The frame pointer of mid must stay (the return address into cold_mid
   or hot_mid lies in mid's frame); hub's frame changes nothing (its
   contexts are told apart before it), so the plugin leaves it out, as
   it does for Lua's luaV_execute.  */

#include "context_test.h"

volatile unsigned long noise[64];

__attribute__ ((noinline)) static void *
make (size_t size)
{
  return allocate (size);
}

/* Large, and using many registers: a loop of arithmetic on NOISE around
   the two allocation calls.  */
__attribute__ ((noinline)) static void
hub (int op, int i)
{
  unsigned long a = noise[0], b = noise[1], c = noise[2], d = noise[3];
  unsigned long e = noise[4], f = noise[5], g = noise[6], h = noise[7];

#pragma GCC unroll 8
  for (int k = 0; k < 8; k++)
    {
      a += b * noise[(k + 8) & 63];
      b ^= c + noise[(k + 9) & 63];
      c += d * noise[(k + 10) & 63];
      d ^= e + noise[(k + 11) & 63];
      e += f * noise[(k + 12) & 63];
      f ^= g + noise[(k + 13) & 63];
      g += h * noise[(k + 14) & 63];
      h ^= a + noise[(k + 15) & 63];
      switch ((op + k) & 7)
        {
        case 0:
          a = (a << 3) ^ (h >> 5);
          break;
        case 1:
          b = (b << 5) ^ (g >> 3);
          break;
        case 2:
          c = (c << 7) ^ (f >> 11);
          break;
        case 3:
          d = (d << 11) ^ (e >> 7);
          break;
        case 4:
          e = (e << 13) ^ (d >> 17);
          break;
        case 5:
          f = (f << 17) ^ (c >> 13);
          break;
        case 6:
          g = (g << 19) ^ (b >> 23);
          break;
        default:
          h = (h << 23) ^ (a >> 19);
          break;
        }
    }
  if (op == 0)
    cold_blocks[i] = make (SIZE);
  else
    hot_blocks[i] = make (SIZE);
  noise[16] = a + b + c + d;
  noise[17] = e + f + g + h;
}

__attribute__ ((noinline)) static void *
mid (void)
{
  return make (SIZE);
}

__attribute__ ((noinline)) static void
cold_mid (int i)
{
  cold_blocks[i] = mid ();
}

__attribute__ ((noinline)) static void
hot_mid (int i)
{
  hot_blocks[i] = mid ();
}

int
main (void)
{
  unsigned long sum = 0;

  for (int i = 0; i < BLOCKS; i++)
    if (i < BLOCKS / 2)
      hub (0, i);
    else
      cold_mid (i);
  for (int i = 0; i < BLOCKS; i++)
    {
      if (i < BLOCKS / 2)
        hub (1, i);
      else
        hot_mid (i);
      sum += use_hot (i);
    }
  return finish (sum);
}
