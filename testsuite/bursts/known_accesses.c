/* Heap blocks whose accesses are known by construction, for the bound on
   sampled access counts (testsuite/bursts/run.py):
   - loop_block: SCAN_ROUNDS rounds over N longs, a volatile load and
     store each: 2 * SCAN_ROUNDS * N accesses, checks on a loop's back
     edge;
   - node: read by a recursive function (not a tail call: no loop),
     DEPTH calls deep, WALKS times: one store and DEPTH * WALKS loads,
     checks at function entries only;
   - copy_block: memcpy of COPY_BYTES from a global, COPIES times, and a
     load: COPIES * (COPY_BYTES / 8 + 1) (a range counts one per 8 bytes);
   - text: 64 bytes, 63 letters and a NUL written by memset and a store
     (9 counts), then read by strlen from TEXT or TEXT + 1, STRLENS times:
     counted by the runtime's interception of strlen, 8 steps a call;
   - guarded_block: read in a function that calls setjmp (left whole with
     sample-accesses: its updates run in bursts only), called GUARDED_CALLS
     times from a loop, 2 loads a call;
   - untouched: 1 MiB never accessed.
   Prints a checksum and exits with status 3, so that a changed behaviour
   shows.  */

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 1000 /* source has N + 8 longs: a copy may start at any */
#define SCAN_ROUNDS 2000
#define DEPTH 50
#define WALKS 20000
#define COPIES 2000000
#define COPY_BYTES 64
#define GUARDED_CALLS 1000000
#define STRLENS 1000000

struct node
{
  volatile long value;
};

static long source[N + 8];
static jmp_buf env;
/* Where the untouched block's address goes, so that GCC keeps the block
   (an unused malloc/free pair is removed).  */
void *volatile kept;

__attribute__ ((noipa)) void
scan (volatile long *a, long rounds)
{
  for (long r = 0; r < rounds; r++)
    for (long i = 0; i < N; i++)
      a[i] += r;
}

__attribute__ ((noipa)) long
walk (const struct node *n, int depth)
{
  if (depth == 0)
    return 0;
  long below = walk (n, depth - 1);
  return below ^ (n->value + depth);
}

__attribute__ ((noipa)) void
copy (long *to, long times, size_t bytes)
{
  for (long t = 0; t < times; t++)
    {
      memcpy (to, source + t % N, bytes);
      source[t % N] += to[t % 8] & 1; /* globals, not heap */
    }
}

__attribute__ ((noipa)) long
measure (const char *text, long times)
{
  long total = 0;
  for (long i = 0; i < times; i++)
    total += strlen (text + (i & 1));
  return total;
}

__attribute__ ((noipa)) long
guarded (volatile long *a, long i)
{
  if (setjmp (env))
    return -1;
  return a[i % 4] + a[(i + 1) % 4];
}

int
main (void)
{
  long *loop_block = calloc (N, sizeof (long));
  struct node *node = malloc (sizeof *node);
  long *copy_block = malloc ((N + 2) * sizeof (long)); /* 8016 bytes */
  long *guarded_block = calloc (4, sizeof (long));
  long *untouched = malloc (1 << 20);
  char *text = malloc (64);
  long checksum = 0;
  kept = untouched;

  for (int i = 0; i < N; i++)
    source[i] = i;
  node->value = 3; /* one store */
  scan (loop_block, SCAN_ROUNDS);
  for (int w = 0; w < WALKS; w++)
    checksum += walk (node, DEPTH);
  copy (copy_block, COPIES, COPY_BYTES);
  for (long i = 0; i < GUARDED_CALLS; i++)
    checksum += guarded (guarded_block, i);
  memset (text, 'a', 63);
  text[63] = '\0';
  checksum += measure (text, STRLENS);
  printf ("checksum %ld %ld\n", checksum, source[7]);
  free (loop_block);
  free (node);
  free (copy_block);
  free (guarded_block);
  free (untouched);
  free (text);
  return 3;
}
