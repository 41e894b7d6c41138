/* The reserve (emergency.c) and the malloc family's calls made inside a
   section (allocator.c): blocks of every size and alignment, reused
   after their frees, taken and freed by several threads at once; a
   malloc, calloc and realloc inside a section get the reserve's blocks,
   which free, realloc and malloc_usable_size know outside it and from
   another thread; a free of glibc's block inside a section waits for
   the section's end.  Also a handler that interrupts the thread's own
   pops and pushes of a list, and every other form of the malloc family
   inside a section (the aligned ones, operator new's, calloc's reused
   spans) with every kind of free and resize outside it.  */

#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "internal.h"
#include "unit.h"

extern void *__libc_malloc (size_t);
extern void free_sized (void *, size_t);
extern void free_aligned_sized (void *, size_t, size_t);
/* new_delete.c's operator delete[] (void *, size_t) and operator delete
   (void *, size_t, std::align_val_t).  */
extern void _ZdaPvm (void *, size_t);
extern void _ZdlPvmSt11align_val_t (void *, size_t, size_t);
void *allocator_allocate_reentered (size_t size, size_t alignment);

#define THREADS 4
#define ROUNDS 20000
#define HELD 16

/* A block of the reserve has a header before it: the word before the
   user pointer has the header's tag (a glibc chunk's size field never
   has it), and the block is 64-byte aligned.  */
static bool
looks_like_reserve_block (const void *pointer)
{
  return ((uintptr_t) pointer & 63) == 0
         && (((const uint64_t *) pointer)[-1] & MEMPROF_HEADER_TAG) != 0;
}

START_TEST (test_sizes_and_alignments)
{
  static const size_t sizes[]
      = { 0, 1, 24, 64, 100, 1000, 4000, 60000, 70000, 1 << 20 };
  static const size_t alignments[] = { 16, 64, 128, 4096, 65536 };
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
    for (size_t a = 0; a < sizeof alignments / sizeof alignments[0]; a++)
      {
        size_t size = sizes[s], alignment = alignments[a];
        unsigned char *block = emergency_allocate (size, alignment);
        ck_assert_ptr_nonnull (block);
        ck_assert_msg (((uintptr_t) block & (alignment - 1)) == 0
                           && ((uintptr_t) block & 63) == 0,
                       "%zu bytes aligned to %zu at %p", size, alignment,
                       (void *) block);
        /* The caller's room and every byte asked for are writable.  */
        memset (block - EMERGENCY_ROOM, 0xa5, EMERGENCY_ROOM);
        memset (block, 0x5a, size);
        emergency_free (block);
      }
}
END_TEST

START_TEST (test_freed_spans_reused)
{
  void *first[8], *again[8];
  for (int i = 0; i < 8; i++)
    first[i] = emergency_allocate (200, 64);
  for (int i = 0; i < 8; i++)
    emergency_free (first[i]);
  /* Last freed, first taken.  */
  for (int i = 0; i < 8; i++)
    again[i] = emergency_allocate (200, 64);
  for (int i = 0; i < 8; i++)
    ck_assert_ptr_eq (again[i], first[7 - i]);
  for (int i = 0; i < 8; i++)
    emergency_free (again[i]);
}
END_TEST

/* Blocks one thread takes, another frees: each thread's blocks carry its
   mark, checked before the free, so a span handed out twice shows.  */
static void *_Atomic handed[THREADS];

static void *
hammer_reserve (void *argument)
{
  unsigned mark = (unsigned) (uintptr_t) argument;
  unsigned char *held[HELD] = { 0 };
  size_t held_size[HELD] = { 0 };
  unsigned long bad = 0;
  uint64_t random = 0x9e3779b97f4a7c15ULL * (mark + 1);
  for (unsigned round = 0; round < ROUNDS; round++)
    {
      random ^= random << 13;
      random ^= random >> 7;
      random ^= random << 17;
      unsigned slot = (unsigned) (random % HELD);
      if (held[slot] != NULL)
        {
          for (size_t k = 0; k < held_size[slot]; k++)
            bad += held[slot][k] != (unsigned char) mark;
          emergency_free (held[slot]);
        }
      held_size[slot] = 1 + (size_t) (random >> 20) % 3000;
      held[slot] = emergency_allocate (held_size[slot], 64);
      ck_assert_ptr_nonnull (held[slot]);
      memset (held[slot], (int) mark, held_size[slot]);
      /* A block of another thread's, freed here.  */
      void *theirs = atomic_exchange (&handed[(mark + 1) % THREADS], NULL);
      if (theirs != NULL)
        emergency_free (theirs);
      void *mine = emergency_allocate (100, 64);
      void *left = atomic_exchange (&handed[mark], mine);
      if (left != NULL)
        emergency_free (left);
    }
  for (unsigned slot = 0; slot < HELD; slot++)
    if (held[slot] != NULL)
      emergency_free (held[slot]);
  return (void *) bad;
}

START_TEST (test_threads_take_and_free)
{
  pthread_t threads[THREADS];
  for (unsigned i = 0; i < THREADS; i++)
    pthread_create (&threads[i], NULL, hammer_reserve, (void *) (uintptr_t) i);
  unsigned long bad = 0;
  for (unsigned i = 0; i < THREADS; i++)
    {
      void *result;
      pthread_join (threads[i], &result);
      bad += (unsigned long) (uintptr_t) result;
    }
  for (unsigned i = 0; i < THREADS; i++)
    {
      void *left = atomic_exchange (&handed[i], NULL);
      if (left != NULL)
        emergency_free (left);
    }
  ck_assert_msg (bad == 0,
                 "%lu bytes of live blocks changed by another "
                 "thread",
                 bad);
}
END_TEST

static void *
free_elsewhere (void *block)
{
  free (block);
  return NULL;
}

START_TEST (test_calls_inside_a_section)
{
  ck_assert (entry_begin ());
  unsigned char *plain = malloc (40);
  unsigned char *zeroed = calloc (10, 30);
  unsigned char *grown = realloc (NULL, 50);
  unsigned char *aligned = aligned_alloc (256, 512);
  entry_end ();
  ck_assert_ptr_nonnull (plain);
  ck_assert_ptr_nonnull (zeroed);
  ck_assert_ptr_nonnull (grown);
  ck_assert_ptr_nonnull (aligned);
  ck_assert_msg (looks_like_reserve_block (plain)
                     && looks_like_reserve_block (zeroed)
                     && looks_like_reserve_block (grown)
                     && looks_like_reserve_block (aligned),
                 "malloc, calloc, realloc and aligned_alloc inside a section "
                 "are the reserve's blocks, not glibc's");
  ck_assert (((uintptr_t) aligned & 255) == 0);
  for (int i = 0; i < 300; i++)
    ck_assert (zeroed[i] == 0);
  ck_assert_uint_eq (malloc_usable_size (plain), 40);
  ck_assert_uint_eq (malloc_usable_size (zeroed), 300);
  /* Outside the section: resized (its bytes kept), measured, freed.  */
  memset (grown, 7, 50);
  grown = realloc (grown, 100000);
  ck_assert_ptr_nonnull (grown);
  for (int i = 0; i < 50; i++)
    ck_assert (grown[i] == 7);
  free (grown);
  free (aligned);
  /* By another thread.  */
  pthread_t thread;
  pthread_create (&thread, NULL, free_elsewhere, plain);
  pthread_join (thread, NULL);
  /* A realloc inside a section: a fresh reserve block, the old one
     given back at once.  */
  ck_assert (entry_begin ());
  memset (zeroed, 3, 300);
  unsigned char *moved = realloc (zeroed, 600);
  entry_end ();
  ck_assert (looks_like_reserve_block (moved));
  for (int i = 0; i < 300; i++)
    ck_assert (moved[i] == 3);
  free (moved);
}
END_TEST

START_TEST (test_glibc_free_inside_a_section_waits)
{
  void *block = __libc_malloc (100);
  uint64_t deferred = runtime_frees_deferred;
  ck_assert (entry_begin ());
  free (block);
  /* Not given to glibc's free, which the section may be inside.  */
  ck_assert_ptr_eq (runtime_deferred_frees, block);
  ck_assert_uint_eq (runtime_frees_deferred, deferred + 1);
  entry_end ();
  ck_assert_ptr_null (runtime_deferred_frees);
}
END_TEST

/* A handler on the same thread that takes and frees spans of the class
   the interrupted call is popping or pushing (between its load of the
   list's head and its compare-and-swap): each block carries its owner's
   mark, checked before its free, so a span handed out twice shows.  */
static __thread unsigned char *handler_held[HELD];
static __thread unsigned handler_round;
static volatile sig_atomic_t handler_bad, handler_calls;

static void
check_handler_block (unsigned char *block)
{
  for (int k = 0; k < 100; k++)
    if (block[k] != 0xee)
      {
        handler_bad = handler_bad + 1;
        break;
      }
}

/* Most calls pop two spans and push the first back: the list's head is
   then what the interrupted pop read, its next span the handler's (a
   pop whose compare-and-swap looked at the head alone would hand that
   span out again).  Every HELD-th call gives the kept ones back.  */
static void
reserve_handler (int signal)
{
  (void) signal;
  unsigned slot = handler_round++ % HELD;
  if (slot == HELD - 1)
    {
      /* No span twice among them.  */
      for (unsigned i = 0; i < HELD; i++)
        for (unsigned j = i + 1; j < HELD; j++)
          if (handler_held[i] != NULL && handler_held[i] == handler_held[j])
            {
              handler_bad = handler_bad + 1;
              handler_held[j] = NULL;
            }
      for (unsigned i = 0; i < HELD; i++)
        if (handler_held[i] != NULL)
          {
            check_handler_block (handler_held[i]);
            emergency_free (handler_held[i]);
            handler_held[i] = NULL;
          }
    }
  else
    {
      unsigned char *first = emergency_allocate (100, 64);
      unsigned char *second = emergency_allocate (100, 64);
      if (second != NULL)
        memset (second, 0xee, 100);
      if (first != NULL)
        emergency_free (first);
      handler_held[slot] = second;
    }
  handler_calls = handler_calls + 1;
}

START_TEST (test_handler_inside_the_lists)
{
  struct sigaction action, saved;
  memset (&action, 0, sizeof action);
  action.sa_handler = reserve_handler;
  action.sa_flags = SA_RESTART;
  sigaction (SIGALRM, &action, &saved);
  struct itimerval every = { { 0, 50 }, { 0, 50 } },
                   off = { { 0, 0 }, { 0, 0 } };
  setitimer (ITIMER_REAL, &every, NULL);
  unsigned char *held[HELD] = { 0 };
  unsigned long bad = 0;
  for (unsigned long round = 0; round < 40000000 && handler_calls < 20000;
       round++)
    {
      unsigned slot = round % HELD;
      if (held[slot] != NULL)
        {
          for (int k = 0; k < 100; k++)
            if (held[slot][k] != 0x11)
              {
                bad++;
                break;
              }
          emergency_free (held[slot]);
        }
      held[slot] = emergency_allocate (100, 64);
      ck_assert_ptr_nonnull (held[slot]);
      /* Nobody else holds it: no other slot of the thread's, no block
         its handler keeps.  */
      for (unsigned other = 0; other < HELD; other++)
        bad += (other != slot && held[other] == held[slot])
               + (handler_held[other] == held[slot]);
      memset (held[slot], 0x11, 100);
    }
  setitimer (ITIMER_REAL, &off, NULL);
  sigaction (SIGALRM, &saved, NULL);
  for (unsigned slot = 0; slot < HELD; slot++)
    {
      emergency_free (held[slot]);
      if (handler_held[slot] != NULL)
        emergency_free (handler_held[slot]);
      handler_held[slot] = NULL;
    }
  ck_assert_msg (bad == 0 && handler_bad == 0,
                 "%lu of the thread's blocks and %d of its handler's handed "
                 "out twice or changed by the other",
                 bad, (int) handler_bad);
}
END_TEST

/* The aligned forms, operator new's and the larger blocks made inside a
   section: aligned as asked, measured, resized (grown, shrunk, to 0)
   and given back outside it by every kind of free; calloc's blocks
   zeroed when their spans come back from a list.  */
START_TEST (test_every_form_inside_a_section)
{
  ck_assert (entry_begin ());
  void *pm = NULL;
  int rc = posix_memalign (&pm, 65536, 100);
  void *va = valloc (10);
  void *pv = pvalloc (5000);
  void *ma = memalign (96, 33);
  void *big = calloc (1, 1 << 20);
  void *array = allocator_allocate_reentered (777, 16);
  void *over = allocator_allocate_reentered (50, 256);
  unsigned char *shrunk = malloc (5000);
  void *emptied = malloc (300);
  unsigned char *dirty = malloc (280);
  entry_end ();
  ck_assert_int_eq (rc, 0);
  ck_assert (looks_like_reserve_block (pm) && looks_like_reserve_block (va)
             && looks_like_reserve_block (pv) && looks_like_reserve_block (ma)
             && looks_like_reserve_block (big)
             && looks_like_reserve_block (array)
             && looks_like_reserve_block (over));
  ck_assert (((uintptr_t) pm & 65535) == 0);
  ck_assert (((uintptr_t) va & 4095) == 0 && ((uintptr_t) pv & 4095) == 0);
  ck_assert (((uintptr_t) ma & 127) == 0 && ((uintptr_t) over & 255) == 0);
  ck_assert_uint_eq (malloc_usable_size (pm), 100);
  ck_assert_uint_eq (malloc_usable_size (pv), 8192);
  for (int i = 0; i < (1 << 20); i++)
    ck_assert (((unsigned char *) big)[i] == 0);
  memset (shrunk, 9, 5000);
  shrunk = realloc (shrunk, 10);
  ck_assert_ptr_nonnull (shrunk);
  for (int i = 0; i < 10; i++)
    ck_assert (shrunk[i] == 9);
  ck_assert_ptr_null (realloc (emptied, 0));
  free_aligned_sized (pm, 65536, 100);
  free_sized (va, 10);
  free (pv);
  free (ma);
  free_sized (big, 1 << 20);
  _ZdaPvm (array, 777);
  _ZdlPvmSt11align_val_t (over, 50, 256);
  free (shrunk);
  memset (dirty, 0xff, 280);
  free (dirty);
  /* The same spans again, through calloc: zeroed.  */
  ck_assert (entry_begin ());
  unsigned char *again = calloc (1, 1 << 20);
  unsigned char *small = calloc (70, 4);
  entry_end ();
  for (int i = 0; i < (1 << 20); i++)
    ck_assert (again[i] == 0);
  for (int i = 0; i < 280; i++)
    ck_assert (small[i] == 0);
  free (again);
  free (small);
}
END_TEST

Suite *
emergency_suite (void)
{
  Suite *suite = suite_create ("emergency");
  TCase *reserve = tcase_create ("reserve");
  tcase_set_timeout (reserve, 60);
  tcase_add_test (reserve, test_sizes_and_alignments);
  tcase_add_test (reserve, test_freed_spans_reused);
  tcase_add_test (reserve, test_threads_take_and_free);
  tcase_add_test (reserve, test_calls_inside_a_section);
  tcase_add_test (reserve, test_glibc_free_inside_a_section_waits);
  tcase_add_test (reserve, test_handler_inside_the_lists);
  tcase_add_test (reserve, test_every_form_inside_a_section);
  suite_add_tcase (suite, reserve);
  return suite;
}
